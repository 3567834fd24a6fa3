#include "bench/blas_two_kernel_scorer.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_scorer.h"
#include "kernels/cpu/simd_kernel.h"
#include "model/shape_checks.h"
#include "util/shared_library.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// OpenBLAS, loaded the first time a peer scores: only `gmmscore bench` uses it, and linked in it
// would be loaded by every start of gmmscore, each Kaldi tool a recipe runs included, and start
// its threads there (8.6 ms a start, measured).
struct OpenBlas {
  void (*set_num_threads)(int) = nullptr;
  decltype(&cblas_sgemm) sgemm = nullptr;
};

absl::StatusOr<OpenBlas> OpenOpenBlas() {
  GMM_ASSIGN_OR_RETURN(SharedLibrary library,
                       SharedLibrary::Open("libopenblas.so.0", "the BLAS peer",
                                           "Debian: apt-get install libopenblas0"));
  OpenBlas loaded;
  GMM_RETURN_IF_ERROR(library.Load("openblas_set_num_threads", &loaded.set_num_threads));
  GMM_RETURN_IF_ERROR(library.Load("cblas_sgemm", &loaded.sgemm));
  return loaded;
}

const absl::StatusOr<OpenBlas>& LoadOpenBlas() {
  static const absl::StatusOr<OpenBlas> blas = OpenOpenBlas();
  return blas;
}

}  // namespace

BlasTwoKernelScorer::BlasTwoKernelScorer(const GmmModel& model, int num_threads)
    : dim_(model.dim()), num_threads_(num_threads), gauss_begin_(model.spec().gauss_begin) {
  const int32_t k = 2 * dim_ + 1;
  expanded_.resize(size_t(model.num_gauss()) * k);
  for (int64_t g = 0; g < model.num_gauss(); ++g) {
    float* row = &expanded_[size_t(g) * k];
    row[0] = static_cast<float>(std::max(model.gconst(g), -1e30));
    const auto u = model.mean_invvar(g);
    const auto v = model.neg_half_invvar(g);
    std::copy(u.begin(), u.end(), row + 1);
    std::copy(v.begin(), v.end(), row + 1 + dim_);
  }
}

absl::Status BlasTwoKernelScorer::Score(const Matrix& feats, Matrix* out) const {
  if (absl::Status s = CheckFeatures(feats, dim_); !s.ok()) return s;
  const int32_t frames = feats.rows, k = 2 * dim_ + 1;
  const int32_t num_gauss = static_cast<int32_t>(gauss_begin_.back());
  out->Resize(frames, num_states());
  if (frames == 0) return absl::OkStatus();
  std::vector<float> x_expanded(size_t(frames) * k);
  for (int32_t t = 0; t < frames; ++t) {
    float* row = &x_expanded[size_t(t) * k];
    row[0] = 1.0f;
    for (int32_t d = 0; d < dim_; ++d) {
      row[1 + d] = feats.at(t, d);
      row[1 + dim_ + d] = feats.at(t, d) * feats.at(t, d);
    }
  }
  const absl::StatusOr<OpenBlas>& blas = LoadOpenBlas();
  if (!blas.ok()) return blas.status();
  gauss_scores_.resize(size_t(num_gauss) * frames);
  blas->set_num_threads(num_threads_);
  // [Gaussians x k] . [frames x k]^T = [Gaussians x frames]
  blas->sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, num_gauss, frames, k, 1.0f, expanded_.data(),
              k, x_expanded.data(), k, 0.0f, gauss_scores_.data(), frames);
  const int32_t states = num_states();
#pragma omp parallel num_threads(num_threads_)
  {
    std::vector<float> state_row(frames);
#pragma omp for schedule(static)
    for (int32_t s = 0; s < states; ++s) {
      LogAddRows(&gauss_scores_[size_t(gauss_begin_[s]) * frames],
                 static_cast<int32_t>(gauss_begin_[s + 1] - gauss_begin_[s]), size_t(frames),
                 frames, state_row.data());
      for (int32_t t = 0; t < frames; ++t) out->at(t, s) = state_row[t];
    }
  }
  return absl::OkStatus();
}

}  // namespace gmmscore
