// Early-return helpers for absl::Status / absl::StatusOr, in the style of Abseil's internal ones.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GMM_STATUS_CONCAT_INNER(a, b) a##b
#define GMM_STATUS_CONCAT(a, b) GMM_STATUS_CONCAT_INNER(a, b)

#define GMM_RETURN_IF_ERROR(expr)                                                 \
  do {                                                                            \
    if (absl::Status gmm_status_ = (expr); !gmm_status_.ok()) return gmm_status_; \
  } while (0)

#define GMM_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return std::move(tmp).status();  \
  lhs = std::move(*tmp)

#define GMM_ASSIGN_OR_RETURN(lhs, expr) \
  GMM_ASSIGN_OR_RETURN_IMPL(GMM_STATUS_CONCAT(gmm_statusor_, __COUNTER__), lhs, expr)
