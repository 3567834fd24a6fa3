// The CPU backend's fast path: frames batched in blocks of kFrameBlock, the expanded form
// vectorised over frames (Highway: AVX-512 here, AVX2/SSE4/NEON elsewhere), the log-add fused per
// state, tiles of states spread over threads. Allocation happens per call, never per frame.
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

 private:
  CpuPackedModel packed_;
  int num_threads_;
};

}  // namespace gmmscore
