#include "train/accumulate.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {

GmmAccumulator::GmmAccumulator(const GmmModel& model) : model_(model) {
  const int32_t dim = model.dim();
  const size_t num_gauss = static_cast<size_t>(model.num_gauss());
  log_norm_.resize(num_gauss);
  inv_var_.resize(num_gauss * size_t(dim));
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  for (size_t g = 0; g < num_gauss; ++g) {
    const std::span<const float> var = model.variance(int64_t(g));
    double log_det = 0.0;
    for (int32_t d = 0; d < dim; ++d) {
      log_det += std::log(static_cast<double>(var[d]));
      inv_var_[g * dim + d] = 1.0 / static_cast<double>(var[d]);
    }
    log_norm_[g] = model.log_weight(int64_t(g)) - 0.5 * (dim * log_2pi + log_det);
  }
}

absl::StatusOr<double> GmmAccumulator::PdfPosteriors(int32_t pdf, const float* x,
                                                     double* posteriors) const {
  const int32_t dim = model_.dim();
  const uint32_t begin = model_.gauss_begin(pdf), end = model_.gauss_end(pdf);
  double max_ll = -std::numeric_limits<double>::infinity();
  for (uint32_t g = begin; g < end; ++g) {
    const std::span<const float> mean = model_.mean(g);
    const double* inv_var = &inv_var_[size_t(g) * dim];
    double quad = 0.0;
    for (int32_t d = 0; d < dim; ++d) {
      const double diff = static_cast<double>(x[d]) - mean[d];
      quad += diff * diff * inv_var[d];
    }
    const double ll = log_norm_[g] - 0.5 * quad;
    posteriors[g - begin] = ll;
    max_ll = std::max(max_ll, ll);
  }
  if (!std::isfinite(max_ll)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the log-likelihood of pdf ", pdf, " is ", max_ll));
  }
  double sum = 0.0;
  for (uint32_t i = 0; i < end - begin; ++i) {
    posteriors[i] = std::exp(posteriors[i] - max_ll);
    sum += posteriors[i];
  }
  for (uint32_t i = 0; i < end - begin; ++i) posteriors[i] /= sum;
  return max_ll + std::log(sum);
}

void GmmAccumulator::AddFrame(int32_t pdf, const float* x, const double* posteriors, double weight,
                              GmmStats* stats) {
  const int32_t dim = stats->dim;
  const uint32_t begin = stats->gauss_begin[pdf], end = stats->gauss_begin[pdf + 1];
  const bool means = (stats->flags & kGmmMeans) != 0;
  const bool variances = (stats->flags & kGmmVariances) != 0;
  for (uint32_t g = begin; g < end; ++g) {
    const double gamma = weight * posteriors[g - begin];
    stats->occupancy[g] += gamma;
    if (!means || gamma == 0.0) continue;
    double* first = &stats->first[size_t(g) * dim];
    for (int32_t d = 0; d < dim; ++d) first[d] += gamma * x[d];
    if (!variances) continue;
    double* second = &stats->second[size_t(g) * dim];
    for (int32_t d = 0; d < dim; ++d) {
      const double xd = x[d];
      second[d] += gamma * xd * xd;
    }
  }
}

absl::Status GmmAccumulator::CheckFeatures(const Matrix& features) const {
  if (features.cols != model_.dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("features have dimension ", features.cols, ", the model ", model_.dim()));
  }
  for (int32_t t = 0; t < features.rows; ++t) {
    const float* x = features.row(t);
    for (int32_t d = 0; d < features.cols; ++d) {
      if (!std::isfinite(x[d])) {
        return absl::InvalidArgumentError(
            absl::StrCat("frame ", t, ", dimension ", d, " is ", x[d]));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<double> GmmAccumulator::AccumulateAlignment(const Matrix& features,
                                                           std::span<const int32_t> alignment,
                                                           ModelStats* stats) const {
  if (alignment.size() != size_t(features.rows)) {
    return absl::InvalidArgumentError(absl::StrCat("the alignment has ", alignment.size(),
                                                   " frames, the features ", features.rows));
  }
  const TransitionModel& hmm = model_.hmm();
  const int32_t num_tids = hmm.NumTransitionIds();
  std::vector<int32_t> pdfs(alignment.size());
  for (size_t t = 0; t < alignment.size(); ++t) {
    const int32_t tid = alignment[t];
    if (tid < 1 || tid > num_tids) {
      return absl::InvalidArgumentError(absl::StrCat("frame ", t, ": transition-id ", tid,
                                                     " is not in the model (1 to ", num_tids, ")"));
    }
    pdfs[t] = hmm.TransitionIdToPdf(tid);
  }
  GMM_ASSIGN_OR_RETURN(const double log_like, AccumulatePdfAlignment(features, pdfs, stats));
  for (const int32_t tid : alignment) stats->transitions[size_t(tid)] += 1.0;
  return log_like;
}

absl::StatusOr<double> GmmAccumulator::AccumulatePdfAlignment(const Matrix& features,
                                                              std::span<const int32_t> pdfs,
                                                              ModelStats* stats) const {
  if (pdfs.size() != size_t(features.rows)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the alignment has ", pdfs.size(), " frames, the features ", features.rows));
  }
  GMM_RETURN_IF_ERROR(CheckFeatures(features));
  // Posteriors of every frame first, so that nothing is added where a frame fails.
  std::vector<size_t> offset(pdfs.size() + 1, 0);
  for (size_t t = 0; t < pdfs.size(); ++t) {
    if (pdfs[t] < 0 || pdfs[t] >= model_.num_states()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "frame ", t, ": pdf ", pdfs[t], " is not in the model (", model_.num_states(), " pdfs)"));
    }
    offset[t + 1] = offset[t] + size_t(model_.num_gauss_in(pdfs[t]));
  }
  std::vector<double> posteriors(offset.back());
  double log_like = 0.0;
  for (size_t t = 0; t < pdfs.size(); ++t) {
    auto ll = PdfPosteriors(pdfs[t], features.row(int32_t(t)), &posteriors[offset[t]]);
    if (!ll.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("frame ", t, ": ", ll.status().message()));
    }
    log_like += *ll;
  }
  for (size_t t = 0; t < pdfs.size(); ++t) {
    AddFrame(pdfs[t], features.row(int32_t(t)), &posteriors[offset[t]], 1.0, &stats->gmm);
  }
  stats->gmm.total_log_like += log_like;
  stats->gmm.total_frames += double(pdfs.size());
  return log_like;
}

absl::StatusOr<double> GmmAccumulator::AccumulateFrames(int32_t pdf, const float* frames,
                                                        int64_t num_frames, int threads,
                                                        GmmStats* stats) const {
  const int32_t dim = model_.dim();
  for (int64_t t = 0; t < num_frames; ++t) {
    for (int32_t d = 0; d < dim; ++d) {
      const float x = frames[size_t(t) * dim + d];
      if (!std::isfinite(x)) {
        return absl::InvalidArgumentError(absl::StrCat("frame ", t, ", dimension ", d, " is ", x));
      }
    }
  }
  const int num_threads = threads > 0 ? threads : omp_get_max_threads();
  std::vector<GmmStats> partial(size_t(num_threads), GmmStats::ForModel(model_, stats->flags));
  std::vector<double> log_like(size_t(num_threads), 0.0);
  std::vector<absl::Status> failed(static_cast<size_t>(num_threads));
#pragma omp parallel num_threads(num_threads)
  {
    const int me = omp_get_thread_num();
    std::vector<double> posteriors(size_t(model_.num_gauss_in(pdf)));
#pragma omp for schedule(static)
    for (int64_t t = 0; t < num_frames; ++t) {
      const float* x = frames + size_t(t) * dim;
      absl::StatusOr<double> ll = PdfPosteriors(pdf, x, posteriors.data());
      if (!ll.ok()) {
        if (failed[size_t(me)].ok()) {
          failed[size_t(me)] =
              absl::InvalidArgumentError(absl::StrCat("frame ", t, ": ", ll.status().message()));
        }
        continue;
      }
      log_like[size_t(me)] += *ll;
      AddFrame(pdf, x, posteriors.data(), 1.0, &partial[size_t(me)]);
    }
  }
  for (const absl::Status& s : failed) {
    if (!s.ok()) return s;
  }
  double total = 0.0;
  for (int i = 0; i < num_threads; ++i) {
    GMM_RETURN_IF_ERROR(stats->Add(partial[size_t(i)]));
    total += log_like[size_t(i)];
  }
  stats->total_log_like += total;  // the partials hold the sums alone
  stats->total_frames += double(num_frames);
  return total;
}

absl::StatusOr<double> GmmAccumulator::AccumulatePosteriors(const Matrix& features,
                                                            const TransitionPosterior& posterior,
                                                            ModelStats* stats,
                                                            double* weight) const {
  if (posterior.size() != size_t(features.rows)) {
    return absl::InvalidArgumentError(absl::StrCat("the posteriors have ", posterior.size(),
                                                   " frames, the features ", features.rows));
  }
  GMM_RETURN_IF_ERROR(CheckFeatures(features));
  const TransitionModel& hmm = model_.hmm();
  const int32_t num_tids = hmm.NumTransitionIds();
  // Per frame, the weights merged per pdf (Kaldi's ConvertPosteriorToPdfs), in pdf order.
  struct PdfWeight {
    int32_t frame;
    int32_t pdf;
    double weight;
    size_t offset;  // into posteriors
  };
  std::vector<PdfWeight> entries;
  size_t total = 0;
  for (size_t t = 0; t < posterior.size(); ++t) {
    std::map<int32_t, double> per_pdf;
    for (const auto& [tid, w] : posterior[t]) {
      if (tid < 1 || tid > num_tids) {
        return absl::InvalidArgumentError(absl::StrCat(
            "frame ", t, ": transition-id ", tid, " is not in the model (1 to ", num_tids, ")"));
      }
      if (!std::isfinite(w)) {
        return absl::InvalidArgumentError(
            absl::StrCat("frame ", t, ": the weight of transition-id ", tid, " is ", w));
      }
      per_pdf[hmm.TransitionIdToPdf(tid)] += static_cast<double>(w);
    }
    for (const auto& [pdf, w] : per_pdf) {
      entries.push_back({int32_t(t), pdf, w, total});
      total += size_t(model_.num_gauss_in(pdf));
    }
  }
  std::vector<double> posteriors(total);
  double log_like = 0.0, weight_sum = 0.0;
  for (const PdfWeight& e : entries) {
    auto ll = PdfPosteriors(e.pdf, features.row(e.frame), &posteriors[e.offset]);
    if (!ll.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("frame ", e.frame, ": ", ll.status().message()));
    }
    log_like += e.weight * *ll;
    weight_sum += e.weight;
  }
  for (const PdfWeight& e : entries) {
    AddFrame(e.pdf, features.row(e.frame), &posteriors[e.offset], e.weight, &stats->gmm);
  }
  for (const auto& frame : posterior) {
    for (const auto& [tid, w] : frame) stats->transitions[size_t(tid)] += w;
  }
  stats->gmm.total_log_like += log_like;
  stats->gmm.total_frames += weight_sum;
  *weight = weight_sum;
  return log_like;
}

}  // namespace gmmscore
