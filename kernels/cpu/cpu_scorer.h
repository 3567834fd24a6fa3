// The CPU backend's fast path: frames batched in blocks of kFrameBlock, the expanded form
// vectorised over frames (Highway: AVX-512 here, AVX2/SSE4/NEON elsewhere), the log-add fused per
// state, tiles of states spread over threads, and the guard (model/score_guard.h) recomputing in
// the direct form the rare score whose terms were too large. Allocation happens per call, never
// per frame.
#pragma once

#include "kernels/cpu/packed_model.h"
#include "kernels/scorer.h"

namespace gmmscore {

class CpuScorer final : public Scorer {
 public:
  // num_threads <= 0: all hardware threads.
  CpuScorer(const GmmModel& model, int num_threads);

  int32_t dim() const override { return packed_.dim(); }
  int32_t num_states() const override { return packed_.num_states(); }
  std::string name() const override { return "cpu-simd"; }
  absl::Status Score(const Matrix& feats, Matrix* out) const override;
  int num_threads() const { return num_threads_; }
  // The gamma the guard (model/score_guard.h) assumes, kCpuGuardGamma unless set: 0 turns the
  // guard off and 1 sends every score through the direct form, so that tests and benchmarks
  // can measure what it saves and what it costs.
  void set_guard_gamma(float gamma) { guard_gamma_ = gamma; }

 private:
  CpuPackedModel packed_;
  int num_threads_;
  float guard_gamma_ = kCpuGuardGamma;
};

}  // namespace gmmscore
