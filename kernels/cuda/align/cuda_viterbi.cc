#include "kernels/cuda/align/cuda_viterbi.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/align/packed_graphs.h"
#include "kernels/cuda/align/viterbi_kernel.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "kernels/cuda/common/cuda_device.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

template <typename T>
absl::StatusOr<DeviceArray<T>> Upload(const std::vector<T>& host) {
  return UploadToDevice(host);
}

// Where each utterance's back-pointers and checkpoints go (viterbi_kernel.h).
struct SegmentPlan {
  std::vector<int32_t> segment_frames;
  std::vector<int64_t> backpointer_offset, checkpoint_offset;
  int64_t backpointers = 0, checkpoints = 0;

  int64_t Bytes() const { return backpointers * 4 + checkpoints * 8; }
};

// Whole utterances (one segment each), or segments of K = ceil(sqrt(2T)) frames, which about
// minimises (K + 1) x 4 + (T / K) x 8 bytes a state: 6.8 KB a state for an hour of frames, where
// one segment would take 1.4 MB; the price is a second pass over all but the last segment.
// A forced segment length (> 0) takes the place of sqrt(2T).
SegmentPlan PlanSegments(std::span<const int32_t> frames, std::span<const int32_t> states,
                         bool checkpointed, int32_t forced) {
  SegmentPlan plan;
  for (size_t u = 0; u < frames.size(); ++u) {
    const int32_t t = frames[u];
    int32_t k = std::max(t, 1);
    if (checkpointed) {
      const int32_t sqrt_2t = int32_t(std::ceil(std::sqrt(2.0 * double(t))));
      k = std::clamp(forced > 0 ? forced : sqrt_2t, 1, std::max(t, 1));
    }
    const int64_t segments = t == 0 ? 1 : (int64_t(t) + k - 1) / k;
    plan.segment_frames.push_back(k);
    plan.backpointer_offset.push_back(plan.backpointers);
    plan.checkpoint_offset.push_back(plan.checkpoints);
    plan.backpointers += int64_t(k + 1) * states[u];
    plan.checkpoints += (segments - 1) * states[u];
  }
  return plan;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaViterbi>> CudaViterbi::Create(int device) {
  GMM_RETURN_IF_ERROR(SelectDevice(device));
  return std::unique_ptr<CudaViterbi>(new CudaViterbi(device));
}

absl::StatusOr<std::vector<ViterbiResult>> CudaViterbi::Align(
    std::span<const ViterbiUtterance> utterances, const TransitionModel& model,
    float acoustic_scale) {
  GMM_RETURN_IF_ERROR(SelectDevice(device_));
  GMM_ASSIGN_OR_RETURN(const UploadedScores up, UploadScores(utterances, model, device_));
  return AlignOnDevice(up.graphs, up.frames, up.scores.get(), model, acoustic_scale, nullptr);
}

absl::StatusOr<std::vector<ViterbiResult>> CudaViterbi::AlignOnDevice(
    std::span<const AlignGraph* const> graphs, std::span<const int32_t> utterance_frames,
    const float* device_scores, const TransitionModel& model, float acoustic_scale,
    cudaStream_t stream) {
  const int32_t num_pdfs = model.NumPdfs();
  GMM_ASSIGN_OR_RETURN(const PackedGraphs p, PackGraphs(graphs, utterance_frames, model));
  const std::vector<int32_t>& num_states = p.num_states;
  const std::vector<int32_t>& num_frames = p.num_frames;
  const std::vector<int64_t>& frame_offset = p.frame_offset;
  const int64_t states = p.states, frames = p.frames;
  const int32_t count = int32_t(graphs.size());
  if (count == 0) return std::vector<ViterbiResult>();

  // Whole utterances' back-pointers where they fit, else segments and checkpoints.
  const int64_t fixed =
      states * 2 * 8 + frames * 8 + int64_t(p.arc_source.size()) * 16 + states * 8;
  GMM_RETURN_IF_ERROR(SelectDevice(device_));
  SegmentPlan plan = PlanSegments(num_frames, num_states, false, 0);
  checkpointed_ = segment_frames_ > 0 ||
                  !CheckDeviceRoom(device_, fixed + plan.Bytes(), "", memory_budget_).ok();
  if (checkpointed_) plan = PlanSegments(num_frames, num_states, true, segment_frames_);
  GMM_RETURN_IF_ERROR(CheckDeviceRoom(
      device_, fixed + plan.Bytes(),
      absl::StrCat("aligning ", count, " utterances of ", frames, " frames (", plan.backpointers,
                   " back-pointers, ", plan.checkpoints, " checkpoint costs) needs"),
      memory_budget_));
  // Utterances of many states have the GPU to themselves, one after the other; the rest are
  // aligned a block each, all in one launch.
  std::vector<int32_t> block_utterances, grid_utterances;
  int32_t grid_states = 0;
  GMM_ASSIGN_OR_RETURN(const int32_t max_grid_blocks, MaxViterbiGridBlocks(device_));
  for (int32_t u = 0; u < count; ++u) {
    if (max_grid_blocks > 0 && num_states[size_t(u)] >= grid_states_) {
      grid_utterances.push_back(u);
      grid_states = std::max(grid_states, num_states[size_t(u)]);
    } else {
      block_utterances.push_back(u);
    }
  }
  const int32_t threads = ViterbiThreadsPerBlock();
  const int32_t grid_blocks =
      std::clamp((grid_states + threads - 1) / threads, 1, std::max(max_grid_blocks, 1));
  GMM_ASSIGN_OR_RETURN(auto d_block_utterances, Upload(block_utterances));
  GMM_ASSIGN_OR_RETURN(auto d_traced, DeviceArray<int32_t>::Allocate(size_t(count)));
  GMM_ASSIGN_OR_RETURN(auto d_block_best_cost, DeviceArray<double>::Allocate(size_t(grid_blocks)));
  GMM_ASSIGN_OR_RETURN(auto d_block_best_state,
                       DeviceArray<int32_t>::Allocate(size_t(grid_blocks)));
  GMM_ASSIGN_OR_RETURN(auto d_state_offset, Upload(p.state_offset));
  GMM_ASSIGN_OR_RETURN(auto d_num_states, Upload(p.num_states));
  GMM_ASSIGN_OR_RETURN(auto d_start, Upload(p.start));
  GMM_ASSIGN_OR_RETURN(auto d_num_frames, Upload(p.num_frames));
  GMM_ASSIGN_OR_RETURN(auto d_frame_offset, Upload(p.frame_offset));
  GMM_ASSIGN_OR_RETURN(auto d_depth, Upload(p.epsilon_depth));
  GMM_ASSIGN_OR_RETURN(auto d_segment_frames, Upload(plan.segment_frames));
  GMM_ASSIGN_OR_RETURN(auto d_bp_offset, Upload(plan.backpointer_offset));
  GMM_ASSIGN_OR_RETURN(auto d_cp_offset, Upload(plan.checkpoint_offset));
  GMM_ASSIGN_OR_RETURN(auto d_in_begin, Upload(p.in_begin));
  GMM_ASSIGN_OR_RETURN(auto d_final, Upload(p.final_cost));
  GMM_ASSIGN_OR_RETURN(auto d_source, Upload(p.arc_source));
  GMM_ASSIGN_OR_RETURN(auto d_pdf, Upload(p.arc_pdf));
  GMM_ASSIGN_OR_RETURN(auto d_tid, Upload(p.arc_tid));
  GMM_ASSIGN_OR_RETURN(auto d_weight, Upload(p.arc_weight));
  GMM_ASSIGN_OR_RETURN(auto d_costs, DeviceArray<double>::Allocate(size_t(2 * states)));
  GMM_ASSIGN_OR_RETURN(auto d_bp, DeviceArray<int32_t>::Allocate(size_t(plan.backpointers)));
  GMM_ASSIGN_OR_RETURN(auto d_checkpoints, DeviceArray<double>::Allocate(size_t(plan.checkpoints)));
  GMM_ASSIGN_OR_RETURN(auto d_alignments, DeviceArray<int32_t>::Allocate(size_t(frames)));
  GMM_ASSIGN_OR_RETURN(auto d_frame_loglikes, DeviceArray<float>::Allocate(size_t(frames)));
  GMM_ASSIGN_OR_RETURN(auto d_scores, DeviceArray<float>::Allocate(size_t(count)));
  GMM_ASSIGN_OR_RETURN(auto d_reached, DeviceArray<int32_t>::Allocate(size_t(count)));

  DeviceViterbiBatch batch;
  batch.utterances = count;
  batch.block_utterances = d_block_utterances.get();
  batch.num_block_utterances = int32_t(block_utterances.size());
  batch.traced = d_traced.get();
  batch.block_best_cost = d_block_best_cost.get();
  batch.block_best_state = d_block_best_state.get();
  batch.state_offset = d_state_offset.get();
  batch.num_states = d_num_states.get();
  batch.start = d_start.get();
  batch.num_frames = d_num_frames.get();
  batch.frame_offset = d_frame_offset.get();
  batch.epsilon_depth = d_depth.get();
  batch.segment_frames = d_segment_frames.get();
  batch.backpointer_offset = d_bp_offset.get();
  batch.checkpoint_offset = d_cp_offset.get();
  batch.in_begin = d_in_begin.get();
  batch.final_cost = d_final.get();
  batch.arc_source = d_source.get();
  batch.arc_pdf = d_pdf.get();
  batch.arc_tid = d_tid.get();
  batch.arc_weight = d_weight.get();
  batch.loglikes = device_scores;
  batch.num_pdfs = num_pdfs;
  batch.acoustic_scale = acoustic_scale;
  batch.costs = d_costs.get();
  batch.backpointers = d_bp.get();
  batch.checkpoints = d_checkpoints.get();
  batch.alignments = d_alignments.get();
  batch.frame_loglikes = d_frame_loglikes.get();
  batch.scores = d_scores.get();
  batch.reached_final = d_reached.get();
  GMM_RETURN_IF_ERROR(LaunchViterbiBatch(batch, grid_utterances, grid_blocks, stream));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));

  std::vector<int32_t> alignments(static_cast<size_t>(frames)), reached(static_cast<size_t>(count));
  std::vector<float> scores(static_cast<size_t>(count)),
      frame_loglikes(static_cast<size_t>(frames));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpy(frame_loglikes.data(), d_frame_loglikes.get(),
                                      frame_loglikes.size() * 4, cudaMemcpyDeviceToHost));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpy(alignments.data(), d_alignments.get(), alignments.size() * 4,
                                      cudaMemcpyDeviceToHost));
  GMM_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(reached.data(), d_reached.get(), reached.size() * 4, cudaMemcpyDeviceToHost));
  GMM_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(scores.data(), d_scores.get(), scores.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<ViterbiResult> results(static_cast<size_t>(count));
  for (int32_t u = 0; u < count; ++u) {
    ViterbiResult& r = results[size_t(u)];
    r.reached_final = reached[size_t(u)] != 0;
    if (!r.reached_final) continue;
    r.score = scores[size_t(u)];
    const auto first = alignments.begin() + frame_offset[size_t(u)];
    r.transition_ids.assign(first, first + num_frames[size_t(u)]);
    const auto first_ll = frame_loglikes.begin() + frame_offset[size_t(u)];
    r.frame_loglikes.assign(first_ll, first_ll + num_frames[size_t(u)]);
  }
  return results;
}

}  // namespace gmmscore
