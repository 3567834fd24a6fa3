// Training a single diagonal GMM (a UBM) from frames as Kaldi's gmm-global-init-from-feats does
// (gmmscore train-gmm; the frames kept by train/gmm_init.h's FrameReservoir): EM iterations whose
// E-step runs on the devices of a DeviceEStep, mixing up by splitting from the initial number of
// Gaussians to the target over the first half of the iterations.
#pragma once

#include <cstdint>
#include <functional>
#include <random>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"
#include "train/device_estep.h"
#include "train/mle_update.h"

namespace gmmscore {

struct GlobalGmmTrainingOptions {
  int32_t num_gauss = 100;  // the target
  int32_t num_iters = 50;
  MleOptions mle;
  float perturb_factor = 0.1f;  // of each split, as gmm-global-init-from-feats
};

// One EM iteration, as gmm-global-init-from-feats logs it.
struct GlobalGmmIteration {
  int32_t iter = 0;
  double log_like_per_frame = 0.0;  // of the model the iteration started from
  double objective_change_per_frame = 0.0;
  double count = 0.0;
  int64_t num_gauss = 0;  // before the update
  double estep_seconds = 0.0;
  int32_t split_to = 0;  // Gaussians after the iteration's split, 0 where none
};

// Trains model on frames (the frames estep was made on; model's Gaussians the initial ones)
// for options.num_iters iterations; each iteration is handed to on_iteration. Split draws come
// from rng.
absl::StatusOr<GmmModel> TrainGlobalGmm(
    const GlobalGmmTrainingOptions& options, GmmModel model, const Matrix& frames,
    DeviceEStep& estep, std::mt19937& rng,
    const std::function<void(const GlobalGmmIteration&)>& on_iteration);

}  // namespace gmmscore
