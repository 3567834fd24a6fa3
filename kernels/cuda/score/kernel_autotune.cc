#include "kernels/cuda/score/kernel_autotune.h"

#include <bit>
#include <limits>

#include "kernels/cuda/common/event_timing.h"
#include "kernels/cuda/score/tensor_kernel.h"

namespace gmmscore {
constexpr int kTimedRuns = 3;  // after one warm-up; the median keeps a stray slow run out

int32_t ShapeBucket(int32_t frames) {
  return frames <= 1 ? 0 : std::bit_width(static_cast<uint32_t>(frames - 1));
}

std::vector<CudaKernelConfig> AutotuneCandidates(CudaKernelMode mode, bool tensor_available,
                                                 int32_t frames) {
  std::vector<CudaKernelConfig> candidates;
  const int32_t max_splits = frames <= kSplitMaxFrames ? kMaxSplits : 1;
  if (mode == CudaKernelMode::kSimt || mode == CudaKernelMode::kAuto) {
    for (int32_t splits = 1; splits <= max_splits; splits *= 2) {
      candidates.push_back({CudaKernelKind::kSimt, 1, splits});
    }
  }
  if (mode == CudaKernelMode::kSimt || !tensor_available) return candidates;
  const CudaKernelKind kind = TensorKindOf(mode);
  // A block of more frame tiles is worth trying while half of it would not cover the launch.
  for (int32_t tiles = 1; tiles <= kTensorMaxFrameTiles && (tiles == 1 || 8 * tiles < frames);
       tiles *= 2) {
    for (int32_t splits = 1; splits <= max_splits; splits *= 2) {
      candidates.push_back({kind, tiles, splits});
    }
  }
  return candidates;
}

absl::StatusOr<CudaKernelConfig> PickFastest(
    const std::vector<CudaKernelConfig>& candidates, cudaStream_t stream,
    const std::function<absl::Status(const CudaKernelConfig&)>& launch) {
  if (candidates.empty()) return absl::InternalError("no kernel candidates to tune");
  if (candidates.size() == 1) return candidates.front();
  CudaKernelConfig best = candidates.front();
  double best_ms = std::numeric_limits<double>::infinity();
  for (const CudaKernelConfig& candidate : candidates) {
    GMM_ASSIGN_OR_RETURN(const double ms, MedianMilliseconds(stream, 1, kTimedRuns, [&](int) {
                           return launch(candidate);
                         }));
    if (ms < best_ms) {
      best_ms = ms;
      best = candidate;
    }
  }
  return best;
}

}  // namespace gmmscore
