#include "kernels/cuda/align/cuda_aligner.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "kernels/cuda/common/cuda_device.h"
#include "kernels/cuda/common/cuda_status.h"
#include "model/shape_checks.h"
#include "util/status_macros.h"

namespace gmmscore {

CudaAligner::CudaAligner(const GmmModel& model, std::unique_ptr<CudaResidentModel> resident)
    : model_(model), resident_(std::move(resident)), chooser_(CudaKernelChoice(), kChunkFrames) {}

absl::StatusOr<std::unique_ptr<CudaAligner>> CudaAligner::Create(const GmmModel& model,
                                                                 int device) {
  if (model.hmm().empty()) {
    return absl::InvalidArgumentError("the model has no HMM to align with");
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaResidentModel> resident,
                       CudaResidentModel::Create(model, CudaKernelChoice(), device));
  std::unique_ptr<CudaAligner> aligner(new CudaAligner(model, std::move(resident)));
  GMM_ASSIGN_OR_RETURN(aligner->workspace_, CudaWorkspace::Create(device));
  GMM_RETURN_IF_ERROR(
      aligner->workspace_->Reserve({kChunkFrames, model.dim(), model.num_states(), 1,
                                    aligner->resident_->SplitScratchFloats(kChunkFrames)}));
  GMM_ASSIGN_OR_RETURN(aligner->viterbi_, CudaViterbi::Create(device));
  GMM_ASSIGN_OR_RETURN(aligner->forward_backward_, CudaForwardBackward::Create(device));
  return aligner;
}

absl::StatusOr<std::vector<ViterbiResult>> CudaAligner::Align(
    std::span<const AlignInput> utterances, float acoustic_scale) {
  std::vector<ViterbiResult> results;
  GMM_RETURN_IF_ERROR(ScoreThen(
      utterances, true,
      [&](std::span<const AlignGraph* const> graphs, std::span<const int32_t> frames,
          const float* scores, cudaStream_t stream) -> absl::Status {
        GMM_ASSIGN_OR_RETURN(
            std::vector<ViterbiResult> some,
            viterbi_->AlignOnDevice(graphs, frames, scores, model_.hmm(), acoustic_scale, stream));
        for (ViterbiResult& r : some) results.push_back(std::move(r));
        return absl::OkStatus();
      }));
  return results;
}

absl::StatusOr<std::vector<PosteriorResult>> CudaAligner::Posteriors(
    std::span<const AlignInput> utterances, float acoustic_scale) {
  std::vector<PosteriorResult> results;
  GMM_RETURN_IF_ERROR(ScoreThen(
      utterances, false,
      [&](std::span<const AlignGraph* const> graphs, std::span<const int32_t> frames,
          const float* scores, cudaStream_t stream) -> absl::Status {
        GMM_ASSIGN_OR_RETURN(std::vector<PosteriorResult> some,
                             forward_backward_->RunOnDevice(graphs, frames, scores, model_.hmm(),
                                                            acoustic_scale, stream));
        for (PosteriorResult& r : some) results.push_back(std::move(r));
        return absl::OkStatus();
      }));
  return results;
}

absl::Status CudaAligner::ScoreThen(std::span<const AlignInput> utterances, bool with_backpointers,
                                    const AfterScoring& then) {
  const int32_t dim = model_.dim(), pdfs = model_.num_states();
  std::vector<const AlignGraph*> graphs;
  std::vector<int32_t> frames;
  int64_t total = 0, backpointers = 0;
  for (size_t u = 0; u < utterances.size(); ++u) {
    if (absl::Status s = CheckFeatures(*utterances[u].feats, dim); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("utterance ", u, ": ", s.message()));
    }
    graphs.push_back(utterances[u].graph);
    frames.push_back(utterances[u].feats->rows);
    total += utterances[u].feats->rows;
    backpointers += int64_t(utterances[u].feats->rows + 1) * utterances[u].graph->num_states();
  }
  if (total == 0) return then(graphs, frames, nullptr, nullptr);
  const int device = resident_->device();
  GMM_RETURN_IF_ERROR(SelectDevice(device));
  // A batch whose back-pointers do not fit is aligned half at a time; a single utterance's are
  // held a segment at a time by the Viterbi (cuda_viterbi.h), so only its scores must fit. The
  // forward-backward halves its batch itself.
  const int64_t bytes =
      (total * (dim + pdfs) + (with_backpointers && utterances.size() > 1 ? backpointers : 0)) *
      int64_t(sizeof(float));
  if (absl::Status room = CheckDeviceRoom(
          device, bytes,
          absl::StrCat("the features, scores and back-pointers of ", total, " frames need"));
      !room.ok()) {
    if (utterances.size() < 2) return room;
    const size_t half = utterances.size() / 2;
    GMM_RETURN_IF_ERROR(ScoreThen(utterances.first(half), with_backpointers, then));
    return ScoreThen(utterances.subspan(half), with_backpointers, then);
  }
  GMM_ASSIGN_OR_RETURN(auto feats, DeviceArray<float>::Allocate(size_t(total) * size_t(dim)));
  GMM_ASSIGN_OR_RETURN(auto scores, DeviceArray<float>::Allocate(size_t(total) * size_t(pdfs)));
  GMM_ASSIGN_OR_RETURN(const CudaWorkspace::Borrowed buffers, workspace_->Borrow());
  float* at = feats.get();
  for (const AlignInput& u : utterances) {
    GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(at, u.feats->data.data(),
                                             u.feats->data.size() * sizeof(float),
                                             cudaMemcpyHostToDevice, buffers.stream));
    at += u.feats->data.size();
  }
  // Scored a chunk at a time, frames of several utterances in one launch: a frame's scores do not
  // depend on its neighbours.
  for (int64_t first = 0; first < total; first += kChunkFrames) {
    const int32_t n = int32_t(std::min<int64_t>(kChunkFrames, total - first));
    GMM_ASSIGN_OR_RETURN(const CudaKernelConfig config,
                         chooser_.ConfigFor(*resident_, n, *workspace_));
    GMM_RETURN_IF_ERROR(resident_->Launch(config, feats.get() + first * dim, n,
                                          scores.get() + first * pdfs, buffers.split_scratch,
                                          buffers.stream));
  }
  return then(graphs, frames, scores.get(), buffers.stream);
}

}  // namespace gmmscore
