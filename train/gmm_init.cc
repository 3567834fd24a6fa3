#include "train/gmm_init.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

// Per dimension, the frames' mean and variance (in double).
void GlobalMoments(const Matrix& frames, std::vector<double>* mean, std::vector<double>* var) {
  const size_t dim = size_t(frames.cols);
  mean->assign(dim, 0.0);
  var->assign(dim, 0.0);
  for (int32_t t = 0; t < frames.rows; ++t) {
    for (size_t d = 0; d < dim; ++d) (*mean)[d] += frames.row(t)[d];
  }
  for (double& m : *mean) m /= frames.rows;
  for (int32_t t = 0; t < frames.rows; ++t) {
    for (size_t d = 0; d < dim; ++d) {
      const double diff = frames.row(t)[d] - (*mean)[d];
      (*var)[d] += diff * diff;
    }
  }
  for (double& v : *var) v /= frames.rows;
}

std::vector<int32_t> RandomDistinctFrames(int32_t frames, int32_t count, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> pick(0, frames - 1);
  std::set<int32_t> used;
  std::vector<int32_t> chosen;
  while (int32_t(chosen.size()) < count) {
    const int32_t t = pick(rng);
    if (used.insert(t).second) chosen.push_back(t);
  }
  return chosen;
}

std::vector<int32_t> KMeansPlusPlusFrames(const Matrix& frames, int32_t count,
                                          const std::vector<double>& var, std::mt19937& rng) {
  const int32_t dim = frames.cols;
  std::vector<double> nearest(size_t(frames.rows), std::numeric_limits<double>::infinity());
  std::vector<int32_t> chosen = {std::uniform_int_distribution<int32_t>(0, frames.rows - 1)(rng)};
  while (int32_t(chosen.size()) < count) {
    const float* c = frames.row(chosen.back());
    double total = 0.0;
    for (int32_t t = 0; t < frames.rows; ++t) {
      double dist = 0.0;
      for (int32_t d = 0; d < dim; ++d) {
        const double diff = frames.row(t)[d] - c[d];
        dist += diff * diff / var[size_t(d)];
      }
      nearest[size_t(t)] = std::min(nearest[size_t(t)], dist);
      total += nearest[size_t(t)];
    }
    int32_t next = std::uniform_int_distribution<int32_t>(0, frames.rows - 1)(rng);
    if (total > 0.0) {  // else every frame is a chosen one: any will do
      double u = std::uniform_real_distribution<double>(0.0, total)(rng);
      for (int32_t t = 0; t < frames.rows; ++t) {
        if ((u -= nearest[size_t(t)]) <= 0.0 && nearest[size_t(t)] > 0.0) {
          next = t;
          break;
        }
      }
    }
    chosen.push_back(next);
  }
  return chosen;
}

}  // namespace

absl::StatusOr<GmmModel> InitGmmFromFrames(const Matrix& frames, int32_t num_gauss, GmmInit init,
                                           std::mt19937& rng) {
  if (num_gauss < 1) return absl::InvalidArgumentError("the number of Gaussians must be >= 1");
  if (frames.rows < num_gauss) {
    return absl::InvalidArgumentError(
        absl::StrCat(frames.rows, " frames cannot start ", num_gauss, " Gaussians"));
  }
  std::vector<double> mean, var;
  GlobalMoments(frames, &mean, &var);
  if (*std::max_element(var.begin(), var.end()) <= 0.0) {
    return absl::InvalidArgumentError("the features do not vary in any dimension");
  }
  // A dimension that does not vary gets a tiny variance rather than zero.
  const double floor = 1e-6 * *std::max_element(var.begin(), var.end());
  for (double& v : var) v = std::max(v, floor);
  const std::vector<int32_t> chosen = init == GmmInit::kKMeansPlusPlus
                                          ? KMeansPlusPlusFrames(frames, num_gauss, var, rng)
                                          : RandomDistinctFrames(frames.rows, num_gauss, rng);
  GmmModelSpec spec;
  spec.dim = frames.cols;
  spec.gauss_begin = {0, uint32_t(num_gauss)};
  spec.weights.assign(size_t(num_gauss), 1.0f / float(num_gauss));
  for (const int32_t t : chosen) {
    spec.means.insert(spec.means.end(), frames.row(t), frames.row(t) + frames.cols);
    for (const double v : var) spec.variances.push_back(static_cast<float>(v));
  }
  spec.source_format = "trained";
  return GmmModel::Create(std::move(spec));
}

absl::Status FrameReservoir::Add(const float* frame, int32_t dim) {
  if (frames_.cols == 0) {
    frames_.cols = dim;
  } else if (dim != frames_.cols) {
    return absl::InvalidArgumentError(
        absl::StrCat("features of dimension ", dim, " after features of dimension ", frames_.cols));
  }
  ++seen_;
  if (max_frames_ <= 0 || seen_ <= max_frames_) {
    frames_.data.insert(frames_.data.end(), frame, frame + dim);
    ++frames_.rows;
    return absl::OkStatus();
  }
  // Kept with probability max_frames / seen, in place of a random kept frame.
  if (std::uniform_int_distribution<int64_t>(0, seen_ - 1)(rng_) < max_frames_) {
    const int32_t slot = std::uniform_int_distribution<int32_t>(0, frames_.rows - 1)(rng_);
    std::copy(frame, frame + dim, frames_.row(slot));
  }
  return absl::OkStatus();
}

absl::Status FrameReservoir::AddUtterance(const std::string& key, const Matrix& feats) {
  for (int32_t t = 0; t < feats.rows; ++t) {
    for (int32_t d = 0; d < feats.cols; ++d) {
      if (!std::isfinite(feats.at(t, d))) {
        return absl::InvalidArgumentError(
            absl::StrCat("utterance ", key, ", frame ", t, ", dimension ", d, " is not finite"));
      }
    }
    if (absl::Status s = Add(feats.row(t), feats.cols); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("utterance ", key, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace gmmscore
