// Starting points for training a single diagonal GMM from frames (gmmscore train-gmm):
//  - random frames (Kaldi's gmm-global-init-from-feats): num_gauss distinct frames as means, the
//    frames' global variance for every Gaussian, equal weights;
//  - k-means++ (Arthur and Vassilvitskii, "k-means++: The Advantages of Careful Seeding", SODA
//    2007): the first mean a random frame, each next one a frame drawn with probability
//    proportional to its squared distance (in global standard deviations) to the nearest mean
//    chosen so far; variances and weights as above.
// The result is a model of one state without HMM.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"
#include "util/matrix.h"

namespace gmmscore {

enum class GmmInit { kRandomFrames, kKMeansPlusPlus };

// Errors where there are fewer frames than Gaussians or no dimension varies.
absl::StatusOr<GmmModel> InitGmmFromFrames(const Matrix& frames, int32_t num_gauss, GmmInit init,
                                           std::mt19937& rng);

// Keeps at most max_frames of a stream of frames, each equally likely (reservoir sampling, as
// gmm-global-init-from-feats keeps --num-frames): Add every frame in turn.
class FrameReservoir {
 public:
  FrameReservoir(int64_t max_frames, uint32_t seed) : max_frames_(max_frames), rng_(seed) {}
  // Errors on a dimension different from the first frame's.
  absl::Status Add(const float* frame, int32_t dim);
  // Adds each frame of an utterance's features; errors name the utterance (and the frame and
  // dimension of a value that is not finite).
  absl::Status AddUtterance(const std::string& key, const Matrix& feats);
  const Matrix& frames() const { return frames_; }
  int64_t seen() const { return seen_; }

 private:
  int64_t max_frames_;
  int64_t seen_ = 0;
  Matrix frames_;
  std::mt19937 rng_;
};

}  // namespace gmmscore
