#include "server/rpc/model_adaptation.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "model/gmm_stats.h"
#include "train/accumulate.h"
#include "train/map_update.h"
#include "util/status_macros.h"

namespace gmmscore::server {
namespace {

std::string Label(const v1::AdaptUtterance& u, int index) {
  return u.key().empty() ? absl::StrCat("utterance ", index)
                         : absl::StrCat("utterance ", u.key().substr(0, 200));
}

}  // namespace

absl::StatusOr<GmmModel> AdaptedModel(const GmmModel& base, const v1::AdaptModelRequest& request,
                                      const AdaptLimits& limits, KeptFrames& kept,
                                      Clock::time_point now) {
  if (base.hmm().empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "model '", request.base_model(), "' has no HMM: alignments cannot name its pdfs"));
  }
  if (request.utterances().empty()) return absl::InvalidArgumentError("no utterances to adapt to");
  MapOptions options;
  if (request.has_mean_tau()) options.mean_tau = request.mean_tau();
  if (request.has_variance_tau()) options.variance_tau = request.variance_tau();
  if (request.has_weight_tau()) options.weight_tau = request.weight_tau();
  GMM_RETURN_IF_ERROR(CheckMapOptions(options));
  GMM_ASSIGN_OR_RETURN(const uint16_t flags,
                       ParseGmmFlags(request.has_update_flags() ? request.update_flags() : "mw"));
  // Shapes and the frame limit first: nothing is sized by the request until it is known to fit
  // (kept frames are bounded by their stream's reservation).
  const size_t dim = size_t(base.dim());
  std::vector<Matrix> kept_frames(size_t(request.utterances_size()));
  int64_t total_frames = 0;
  for (int i = 0; i < request.utterances_size(); ++i) {
    const v1::AdaptUtterance& u = request.utterances(i);
    int64_t frames = 0;
    if (!u.from_stream().empty()) {
      if (!u.features().empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(Label(u, i), ": give features or from_stream, not both"));
      }
      absl::StatusOr<Matrix> m = kept.Get(u.from_stream(), now);
      if (!m.ok())
        return absl::Status(m.status().code(),
                            absl::StrCat(Label(u, i), ": ", m.status().message()));
      if (size_t(m->cols) != dim) {
        return absl::InvalidArgumentError(
            absl::StrCat(Label(u, i), ": stream '", u.from_stream().substr(0, 256),
                         "' kept frames of dimension ", m->cols, ", the model's is ", dim));
      }
      frames = m->rows;
      kept_frames[size_t(i)] = *std::move(m);
    } else {
      if (u.features().size() % dim != 0) {
        return absl::InvalidArgumentError(absl::StrCat(Label(u, i), ": ", u.features().size(),
                                                       " feature values are not frames of the "
                                                       "model's dimension ",
                                                       dim));
      }
      frames = u.features().size() / int64_t(dim);
    }
    const int kinds = int(u.alignment_size() > 0) + int(u.posteriors_size() > 0) +
                      int(u.pdf_alignment_size() > 0);
    if (kinds != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(Label(u, i), ": give one of an alignment, posteriors or a pdf alignment"));
    }
    const int64_t labels = u.alignment_size() + u.posteriors_size() + u.pdf_alignment_size();
    if (labels != frames) {
      return absl::InvalidArgumentError(absl::StrCat(Label(u, i), ": ", labels,
                                                     u.alignment_size() > 0 ? " transition-ids"
                                                     : u.posteriors_size() > 0
                                                         ? " frames of posteriors"
                                                         : " pdfs",
                                                     " for ", frames, " frames"));
    }
    for (int t = 0; t < u.posteriors_size(); ++t) {
      if (u.posteriors(t).transition_ids_size() != u.posteriors(t).weights_size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            Label(u, i), ", frame ", t, ": transition-ids and weights differ in number"));
      }
    }
    for (int t = 0; t < u.pdf_alignment_size(); ++t) {
      if (u.pdf_alignment(t) < 0 || u.pdf_alignment(t) >= base.num_states()) {
        return absl::InvalidArgumentError(absl::StrCat(Label(u, i), ", frame ", t, ": pdf ",
                                                       u.pdf_alignment(t), " is not in the model (",
                                                       base.num_states(), " pdfs)"));
      }
    }
    total_frames += frames;
    if (total_frames > limits.max_frames) {
      return absl::ResourceExhaustedError(
          absl::StrCat("more than ", limits.max_frames, " frames (--max-adapt-frames)"));
    }
  }
  const GmmAccumulator accumulator(base);
  ModelStats stats = ModelStats::ForModel(base, flags);
  for (int i = 0; i < request.utterances_size(); ++i) {
    const v1::AdaptUtterance& u = request.utterances(i);
    Matrix feats = std::move(kept_frames[size_t(i)]);
    if (u.from_stream().empty()) {
      feats.Resize(int32_t(u.features().size() / int64_t(dim)), int32_t(dim));
      std::copy(u.features().begin(), u.features().end(), feats.data.begin());
    }
    absl::Status status;
    if (u.alignment_size() > 0) {
      const std::vector<int32_t> alignment(u.alignment().begin(), u.alignment().end());
      status = accumulator.AccumulateAlignment(feats, alignment, &stats).status();
    } else if (u.posteriors_size() > 0) {
      TransitionPosterior posterior(size_t(u.posteriors_size()));
      for (int t = 0; t < u.posteriors_size(); ++t) {
        for (int j = 0; j < u.posteriors(t).transition_ids_size(); ++j) {
          posterior[size_t(t)].emplace_back(u.posteriors(t).transition_ids(j),
                                            u.posteriors(t).weights(j));
        }
      }
      double weight = 0.0;
      status = accumulator.AccumulatePosteriors(feats, posterior, &stats, &weight).status();
    } else {
      const std::vector<int32_t> pdfs(u.pdf_alignment().begin(), u.pdf_alignment().end());
      status = accumulator.AccumulatePdfAlignment(feats, pdfs, &stats).status();
    }
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(Label(u, i), ": ", status.message()));
    }
  }
  return MapUpdate(options, stats.gmm, flags, base, nullptr);
}

}  // namespace gmmscore::server
