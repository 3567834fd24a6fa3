// BatchAligner (kernels/batch_aligner.h) on one GPU: a model resident there (its layouts, its
// kernel choices, one workspace), a batch of utterances' features uploaded, scored by the fast
// kernels straight into a device buffer of frames x pdfs, and aligned by CudaViterbi (or their
// posteriors computed by CudaForwardBackward) from that buffer: the scores never come back to the
// host. The scores of a batch must fit on the device
// with its back-pointers (frames x pdfs x 4 bytes: 20 GB for a million frames of a 5000-pdf
// model); the room is checked before anything is allocated, and a batch that does not fit is
// aligned half at a time. A single utterance needs room for its scores only: its back-pointers
// are checkpointed where they do not fit (cuda_viterbi.h), so an hour of audio on a 5000-pdf
// model takes 7.2 GB of scores and well under a GB for the Viterbi.
#pragma once

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "kernels/batch_aligner.h"
#include "kernels/cuda/align/cuda_forward_backward.h"
#include "kernels/cuda/align/cuda_viterbi.h"
#include "kernels/cuda/score/cuda_resident_model.h"
#include "kernels/cuda/score/cuda_workspace.h"
#include "kernels/cuda/score/kernel_chooser.h"
#include "model/gmm_model.h"

namespace gmmscore {

class CudaAligner final : public BatchAligner {
 public:
  // model must carry an HMM (model.hmm()), and outlive the aligner. Fails as CudaScorer::Create.
  static absl::StatusOr<std::unique_ptr<CudaAligner>> Create(const GmmModel& model, int device);

  absl::StatusOr<std::vector<ViterbiResult>> Align(std::span<const AlignInput> utterances,
                                                   float acoustic_scale) override;
  absl::StatusOr<std::vector<PosteriorResult>> Posteriors(std::span<const AlignInput> utterances,
                                                          float acoustic_scale) override;

  // The Viterbi behind Align: its memory budget, whether the last alignment was checkpointed.
  CudaViterbi& viterbi() { return *viterbi_; }

 private:
  CudaAligner(const GmmModel& model, std::unique_ptr<CudaResidentModel> resident);

  // What runs on a batch's scores once they are on the device (null where it has no frames).
  using AfterScoring =
      std::function<absl::Status(std::span<const AlignGraph* const>, std::span<const int32_t>,
                                 const float* device_scores, cudaStream_t stream)>;
  // Uploads and scores the utterances' features, then runs `then`: on all of them at once, or
  // (where the device has no room for them, with their back-pointers if asked) on each half.
  absl::Status ScoreThen(std::span<const AlignInput> utterances, bool with_backpointers,
                         const AfterScoring& then);

  // Frames per scoring launch.
  static constexpr int32_t kChunkFrames = 4096;

  const GmmModel& model_;
  std::unique_ptr<CudaResidentModel> resident_;
  KernelChooser chooser_;
  std::unique_ptr<CudaWorkspace> workspace_;
  std::unique_ptr<CudaViterbi> viterbi_;
  std::unique_ptr<CudaForwardBackward> forward_backward_;
};

}  // namespace gmmscore
