// The ceilings the kernels are judged against, measured on the device at hand rather than taken
// from a datasheet: the float32 FMA rate, the tensor cores' mma.sync rates (the instructions the
// tensor-core kernel uses) and the device-memory copy bandwidth.
#pragma once

#include <cuda_runtime_api.h>

#include "absl/status/statusor.h"

namespace gmmscore {

struct DeviceCeilings {
  double fma_per_second = 0.0;         // float32 fused multiply-adds, all multiprocessors
  double tf32_flops = 0.0;             // mma.sync m16n8k8 TF32, float32 accumulators (2 per MAC)
  double f16_flops = 0.0;              // mma.sync m16n8k16 FP16, float32 accumulators
  double copy_bytes_per_second = 0.0;  // device-to-device copy, bytes read plus bytes written
};

absl::StatusOr<DeviceCeilings> MeasureDeviceCeilings(cudaStream_t stream);

}  // namespace gmmscore
