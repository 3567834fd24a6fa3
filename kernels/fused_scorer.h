// Scoring frames against several models of the same states and dimension and fusing their scores
// (fusion.h), an utterance at a time: the select rule starts afresh at every call. Backends that
// can fuse where the scores are (CudaFusedScorer: on the device) implement this too.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/scorer.h"
#include "model/fusion.h"
#include "util/matrix.h"

namespace gmmscore {

class FusedScorer {
 public:
  virtual ~FusedScorer() = default;
  virtual std::string name() const = 0;
  // feats: frames x dim; fused: frames x states.
  virtual absl::Status Score(const Matrix& feats, Matrix* fused) const = 0;
};

// Each model's own Scorer, then FuseScores on the host: fusion for any backend. One model: its
// scores as they are.
class HostFusedScorer final : public FusedScorer {
 public:
  // Fails with InvalidArgument for models of different states or dimensions, or a spec that
  // ValidateFusion refuses.
  static absl::StatusOr<std::unique_ptr<HostFusedScorer>> Create(
      std::vector<std::unique_ptr<Scorer>> scorers, FusionSpec spec);

  std::string name() const override;
  absl::Status Score(const Matrix& feats, Matrix* fused) const override;

 private:
  HostFusedScorer(std::vector<std::unique_ptr<Scorer>> scorers, FusionSpec spec)
      : scorers_(std::move(scorers)), spec_(std::move(spec)) {}

  const std::vector<std::unique_ptr<Scorer>> scorers_;
  const FusionSpec spec_;
};

}  // namespace gmmscore
