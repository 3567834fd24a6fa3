#include "train/global_gmm_training.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "train/mix_up.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<GmmModel> TrainGlobalGmm(
    const GlobalGmmTrainingOptions& options, GmmModel model, const Matrix& frames,
    DeviceEStep& estep, std::mt19937& rng,
    const std::function<void(const GlobalGmmIteration&)>& on_iteration) {
  const int32_t target = options.num_gauss;
  const int32_t start = std::min(target, static_cast<int32_t>(model.num_gauss()));
  const int32_t increment = (target - start) / std::max(1, options.num_iters / 2);
  int32_t current = start;
  for (int32_t iter = 0; iter < options.num_iters; ++iter) {
    GlobalGmmIteration done{.iter = iter, .num_gauss = model.num_gauss()};
    const auto begin = std::chrono::steady_clock::now();
    GmmStats stats = GmmStats::ForModel(model, kGmmAll);
    GMM_RETURN_IF_ERROR(estep.Accumulate(model, &stats));
    done.estep_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    done.log_like_per_frame = stats.total_log_like / frames.rows;
    MleSummary summary;
    GMM_ASSIGN_OR_RETURN(model, MleUpdate(options.mle, stats, kGmmAll, model, &summary));
    done.objective_change_per_frame = summary.objective_change / summary.count;
    done.count = summary.count;
    const int32_t next = std::min(target, current + increment);
    if (next > model.num_gauss()) {
      std::normal_distribution<double> normal(0.0, 1.0);
      GMM_ASSIGN_OR_RETURN(
          model, SplitPdfs(model, {next}, options.perturb_factor, [&] { return normal(rng); }));
      current = next;
      done.split_to = next;
    }
    on_iteration(done);
  }
  return model;
}

}  // namespace gmmscore
