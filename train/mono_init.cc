#include "train/mono_init.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "model/monophone_tree.h"
#include "model/tree_transition_model.h"
#include "util/kaldi_random.h"
#include "util/status_macros.h"

namespace gmmscore {

GlobalGaussian UnitGaussian(int32_t dim) {
  return {std::vector<float>(size_t(dim), 1.0f), std::vector<float>(size_t(dim), 1.0f)};
}

absl::Status GlobalStats::Add(const Matrix& frames) {
  if (size_t(frames.cols) != sum_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("features of dimension ", frames.cols, ", expected ", sum_.size()));
  }
  for (int32_t r = 0; r < frames.rows; ++r) {
    const float* frame = frames.row(r);
    count_ += 1.0;
    for (size_t d = 0; d < sum_.size(); ++d) {
      const double x = frame[d];
      sum_squares_[d] += x * x;
      sum_[d] += x;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<GlobalGaussian> GlobalStats::Gaussian() const {
  if (count_ == 0.0) return absl::InvalidArgumentError("no features were seen.");
  const size_t dim = sum_.size();
  GlobalGaussian g{std::vector<float>(dim), std::vector<float>(dim)};
  const double scale = 1.0 / count_;  // multiplied by, as Kaldi's Scale(1.0 / count)
  for (size_t d = 0; d < dim; ++d) {
    const double mean = sum_[d] * scale;
    const double var = sum_squares_[d] * scale - mean * mean;
    if (!(var > 0.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad variance: dimension ", d, " of the features has variance ", var));
    }
    g.mean[d] = static_cast<float>(mean);
    g.inv_var[d] = static_cast<float>(1.0 / var);
  }
  return g;
}

absl::StatusOr<MonophoneInit> InitMonophone(
    const HmmTopology& topology, const std::vector<std::vector<int32_t>>& shared_phone_sets,
    const GlobalGaussian& gaussian, float perturb_factor, std::vector<std::string>* warnings) {
  if (topology.phones.empty()) return absl::InvalidArgumentError("the topology has no phones");
  std::vector<int32_t> num_pdf_classes(size_t(topology.phones.back()) + 1, 0);
  for (const int32_t phone : topology.phones) {
    num_pdf_classes[size_t(phone)] = NumPdfClasses(topology.TopologyForPhone(phone));
  }
  std::vector<std::vector<int32_t>> sets = shared_phone_sets;
  if (sets.empty()) {
    for (const int32_t phone : topology.phones) sets.push_back({phone});
  }
  GMM_ASSIGN_OR_RETURN(ContextDependency tree, MonophoneTree(sets, num_pdf_classes, warnings));
  GMM_ASSIGN_OR_RETURN(TransitionModel hmm, TransitionModelFromTree(tree, topology, warnings));
  const int32_t num_pdfs = tree.NumPdfs();
  const int32_t dim = int32_t(gaussian.mean.size());
  MonophoneInit init{std::move(tree), std::move(hmm), Matrix(num_pdfs, dim), Matrix(num_pdfs, dim)};
  KaldiRandom rng;
  for (int32_t pdf = 0; pdf < num_pdfs; ++pdf) {
    for (int32_t d = 0; d < dim; ++d) {
      const float inv_var = gaussian.inv_var[size_t(d)];
      init.inv_vars.at(pdf, d) = inv_var;
      init.means_invvars.at(pdf, d) = gaussian.mean[size_t(d)] * inv_var;
    }
    if (perturb_factor == 0.0f) continue;
    // Kaldi adds these with BLAS's saxpy, which may fuse the multiply and the add (one rounding,
    // not two): perturbed values can then differ from Kaldi's in the last bit.
    for (int32_t d = 0; d < dim; ++d) {
      const float noise = rng.Gauss() * std::sqrt(init.inv_vars.at(pdf, d));
      init.means_invvars.at(pdf, d) += perturb_factor * noise;
    }
  }
  return init;
}

}  // namespace gmmscore
