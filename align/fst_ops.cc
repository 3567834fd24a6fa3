#include "align/fst_ops.h"

#include <string>

#include "fst/openfst.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<VectorGraph> Compose(const VectorGraph& a, const VectorGraph& b) {
  GMM_ASSIGN_OR_RETURN(const OpenFstFunctions* openfst, OpenFst());
  VectorGraph composed;
  std::string error;
  if (!openfst->compose(a, b, &composed, &error)) return absl::InternalError(error);
  return composed;
}

absl::StatusOr<VectorGraph> Determinize(const VectorGraph& graph, float delta,
                                        int32_t max_kept_ilabel) {
  GMM_ASSIGN_OR_RETURN(const OpenFstFunctions* openfst, OpenFst());
  VectorGraph out;
  std::string error;
  if (!openfst->determinize(graph, delta, max_kept_ilabel, &out, &error)) {
    return absl::InvalidArgumentError(error);
  }
  return out;
}

absl::StatusOr<VectorGraph> MinimizeEncoded(const VectorGraph& graph, float delta) {
  GMM_ASSIGN_OR_RETURN(const OpenFstFunctions* openfst, OpenFst());
  VectorGraph out;
  std::string error;
  if (!openfst->minimize_encoded(graph, delta, &out, &error)) return absl::InternalError(error);
  return out;
}

}  // namespace gmmscore
