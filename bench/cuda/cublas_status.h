// cuBLAS errors as absl::Status, for the peers of bench/cuda/ (the library's own code uses no
// cuBLAS): every call goes through GMM_CUBLAS_RETURN_IF_ERROR, naming the call that failed.
#pragma once

#include <cublas_v2.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {

inline absl::Status CublasStatus(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, " failed: ", cublasGetStatusName(status), " (",
                                          cublasGetStatusString(status), ")"));
}

}  // namespace gmmscore

#define GMM_CUBLAS_RETURN_IF_ERROR(call) \
  GMM_RETURN_IF_ERROR(::gmmscore::CublasStatus((call), #call))
