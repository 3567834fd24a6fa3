#include "model/shape_checks.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace gmmscore {

absl::Status CheckFeatures(const Matrix& feats, int32_t dim) {
  if (feats.cols != dim) {
    return absl::InvalidArgumentError(
        absl::StrCat("features have dimension ", feats.cols, ", the model ", dim));
  }
  for (int32_t t = 0; t < feats.rows; ++t) {
    const float* x = feats.row(t);
    for (int32_t d = 0; d < dim; ++d) {
      if (!FeatureInRange(x[d])) {
        return absl::InvalidArgumentError(
            absl::StrCat("frame ", t, ", dimension ", d, ": ", FeatureRangeProblem(x[d])));
      }
    }
  }
  return absl::OkStatus();
}

std::string FeatureRangeProblem(float x) {
  return std::isfinite(x) ? absl::StrCat("value ", x, " is outside +-", kMaxFeatureMagnitude)
                          : absl::StrCat("value ", x, " is not finite");
}

absl::Status CheckSameShape(std::span<const ModelShape> models) {
  if (models.empty()) return absl::OkStatus();
  const ModelShape& first = models.front();
  for (const ModelShape& m : models) {
    if (m.num_states == first.num_states && m.dim == first.dim) continue;
    const auto named = [](const ModelShape& s) {
      return s.name.empty() ? std::string() : absl::StrCat("'", s.name, "' ");
    };
    return absl::InvalidArgumentError(absl::StrCat(
        "fused models must have the same states and dimension: ", named(first), "has ",
        first.num_states, " x ", first.dim, ", ", named(m), "has ", m.num_states, " x ", m.dim));
  }
  return absl::OkStatus();
}

}  // namespace gmmscore
