// CUDA runtime errors as absl::Status. Every CUDA call of the backend goes through
// GMM_CUDA_RETURN_IF_ERROR, so a failure reaches the caller with the call that failed named.
#pragma once

#include <cuda_runtime_api.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {

inline absl::Status CudaStatus(cudaError_t error, const char* call) {
  if (error == cudaSuccess) return absl::OkStatus();
  absl::StatusCode code = absl::StatusCode::kInternal;
  if (error == cudaErrorMemoryAllocation) {
    code = absl::StatusCode::kResourceExhausted;
  } else if (error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver ||
             error == cudaErrorInvalidDevice) {
    code = absl::StatusCode::kUnavailable;
  }
  return absl::Status(code, absl::StrCat(call, " failed: ", cudaGetErrorName(error), " (",
                                         cudaGetErrorString(error), ")"));
}

}  // namespace gmmscore

#define GMM_CUDA_RETURN_IF_ERROR(call) GMM_RETURN_IF_ERROR(::gmmscore::CudaStatus((call), #call))
