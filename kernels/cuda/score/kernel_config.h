// Which kernel scores a launch, and with which blocking: what the autotune of CudaScorer chooses
// per model and batch shape (kernel_autotune.h). C++17, shared with the kernels' translation units.
#pragma once

#include <cstdint>
#include <string>

namespace gmmscore {

enum class CudaKernelKind {
  kSimt,          // simt_kernel.h: float32 FMA
  kTensor3xTf32,  // tensor_kernel.h: tensor cores, float32 accuracy (three TF32 products)
  kTensor1xTf32,  // tensor_kernel.h: one TF32 product, faster and far less exact (explicit only)
  kTensor3xF16,  // tensor_f16_kernel.h: tensor cores, float32 accuracy (three scaled FP16 products)
};

// A launch of several splits has splits blocks share each group's Gaussians, each log-adding a
// slice of them into scratch, [splits][frames][slots] floats, that a second kernel combines
// (split_combine.h): more blocks for short windows, and a last wave of blocks that is less empty.
inline constexpr int32_t kMaxSplits = 8;
// Split launches are offered only up to this many frames, where a window has too few frame blocks
// to fill the device, to bound that scratch.
inline constexpr int32_t kSplitMaxFrames = 256;

// Floats of split scratch that launches of up to `frames` frames need, for a layout of num_slots
// slots (groups x states a group).
inline int64_t SplitScratchFloats(int32_t frames, int64_t num_slots) {
  return int64_t(kMaxSplits) * (frames < kSplitMaxFrames ? frames : kSplitMaxFrames) * num_slots;
}

struct CudaKernelConfig {
  CudaKernelKind kind = CudaKernelKind::kSimt;
  // Tensor kernels only: tiles of 16 frames per block, one warp each (a block scores
  // 16 x frame_tiles frames of one group of states).
  int32_t frame_tiles = 1;
  // Every kernel: the number of blocks that share a group's Gaussians (kMaxSplits above).
  int32_t splits = 1;

  bool operator==(const CudaKernelConfig& other) const {
    return kind == other.kind && frame_tiles == other.frame_tiles && splits == other.splits;
  }
};

// What CudaScorer may choose from.
enum class CudaKernelMode {
  kAuto,        // the fastest of SIMT and the 3xF16 tensor kernel, per batch shape
  kSimt,        // the SIMT kernel only
  kTensor,      // the 3xF16 tensor kernel (float32 accuracy), blocking tuned per batch shape
  kTensorFast,  // the 1xTF32 tensor kernel: errors of about 0.1 nats; only when asked for
  kTensorTf32,  // the 3xTF32 tensor kernel, blocking tuned: the 3xF16 kernel's peer, for
                // comparisons
};

// The tensor kind a mode's autotune tries (kAuto and kTensor: the 3xF16 kernel; kSimt: none,
// kSimt).
inline CudaKernelKind TensorKindOf(CudaKernelMode mode) {
  switch (mode) {
    case CudaKernelMode::kSimt:
      return CudaKernelKind::kSimt;
    case CudaKernelMode::kTensorFast:
      return CudaKernelKind::kTensor1xTf32;
    case CudaKernelMode::kTensorTf32:
      return CudaKernelKind::kTensor3xTf32;
    case CudaKernelMode::kAuto:
    case CudaKernelMode::kTensor:
      break;
  }
  return CudaKernelKind::kTensor3xF16;
}

inline const char* KindName(CudaKernelKind kind) {
  switch (kind) {
    case CudaKernelKind::kSimt:
      return "SIMT";
    case CudaKernelKind::kTensor3xTf32:
      return "tensor 3xTF32";
    case CudaKernelKind::kTensor1xTf32:
      return "tensor 1xTF32";
    case CudaKernelKind::kTensor3xF16:
      break;
  }
  return "tensor 3xF16";
}

// A kind's error per unit of c + r (model/score_guard.h), for the guard that ends every launch:
// about 1.5 times the worst the randomized search of cuda_scorer_test and cuda_tensor_scorer_test
// finds on an H100 (docs/ARCHITECTURE.md, "Score error model"). 0 for the 1xTF32 kernel, whose
// errors of 0.1 nats are what it is chosen for: no guard.
inline float GuardGamma(CudaKernelKind kind) {
  switch (kind) {
    case CudaKernelKind::kSimt:
      return 16.0f * 0x1p-24f;
    case CudaKernelKind::kTensor3xTf32:
      return 16.0f * 0x1p-24f;
    case CudaKernelKind::kTensor1xTf32:
      return 0.0f;
    case CudaKernelKind::kTensor3xF16:
      break;
  }
  return 16.0f * 0x1p-24f;
}

inline std::string ToString(const CudaKernelConfig& config) {
  if (config.kind == CudaKernelKind::kSimt) {
    return config.splits == 1 ? "SIMT" : "SIMT " + std::to_string(config.splits) + " splits";
  }
  return std::string(KindName(config.kind)) + " " + std::to_string(16 * config.frame_tiles) +
         " frames/block, " + std::to_string(config.splits) +
         (config.splits == 1 ? " split" : " splits");
}

}  // namespace gmmscore
