#include "kernels/cuda/kernel_autotune.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/tensor_kernel.h"

namespace gmmscore {
namespace {

constexpr int kTimedRuns = 3;  // after one warm-up; the median keeps a stray slow run out

// Destroys the events however the timing loop ends.
struct EventPair {
  EventPair() = default;
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  ~EventPair() {
    if (start != nullptr) (void)cudaEventDestroy(start);
    if (stop != nullptr) (void)cudaEventDestroy(stop);
  }
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
};

}  // namespace

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
  EventPair events;
  GMM_CUDA_RETURN_IF_ERROR(cudaEventCreate(&events.start));
  GMM_CUDA_RETURN_IF_ERROR(cudaEventCreate(&events.stop));
  CudaKernelConfig best = candidates.front();
  float best_ms = std::numeric_limits<float>::infinity();
  for (const CudaKernelConfig& candidate : candidates) {
    GMM_RETURN_IF_ERROR(launch(candidate));  // warm-up
    float ms[kTimedRuns];
    for (float& run_ms : ms) {
      GMM_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.start, stream));
      GMM_RETURN_IF_ERROR(launch(candidate));
      GMM_CUDA_RETURN_IF_ERROR(cudaEventRecord(events.stop, stream));
      GMM_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(events.stop));
      GMM_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&run_ms, events.start, events.stop));
    }
    std::sort(ms, ms + kTimedRuns);
    if (ms[kTimedRuns / 2] < best_ms) {
      best_ms = ms[kTimedRuns / 2];
      best = candidate;
    }
  }
  return best;
}

}  // namespace gmmscore
