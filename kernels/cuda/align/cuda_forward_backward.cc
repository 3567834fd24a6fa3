#include "kernels/cuda/align/cuda_forward_backward.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/align/forward_backward_kernel.h"
#include "kernels/cuda/align/packed_graphs.h"
#include "kernels/cuda/common/cuda_buffers.h"
#include "kernels/cuda/common/cuda_device.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<CudaForwardBackward>> CudaForwardBackward::Create(int device) {
  GMM_RETURN_IF_ERROR(SelectDevice(device));
  return std::unique_ptr<CudaForwardBackward>(new CudaForwardBackward(device));
}

absl::StatusOr<std::vector<PosteriorResult>> CudaForwardBackward::Run(
    std::span<const ViterbiUtterance> utterances, const TransitionModel& model,
    float acoustic_scale) {
  GMM_RETURN_IF_ERROR(SelectDevice(device_));
  GMM_ASSIGN_OR_RETURN(const UploadedScores up, UploadScores(utterances, model, device_));
  return RunOnDevice(up.graphs, up.frames, up.scores.get(), model, acoustic_scale, nullptr);
}

absl::StatusOr<std::vector<PosteriorResult>> CudaForwardBackward::RunOnDevice(
    std::span<const AlignGraph* const> graphs, std::span<const int32_t> frames,
    const float* device_scores, const TransitionModel& model, float acoustic_scale,
    cudaStream_t stream) {
  if (graphs.empty()) return std::vector<PosteriorResult>();
  GMM_ASSIGN_OR_RETURN(const PackedGraphs p, PackGraphs(graphs, frames, model));
  const int32_t count = int32_t(graphs.size());
  std::vector<int32_t> arc_offset;
  std::vector<int64_t> alpha_offset, gamma_offset;
  int64_t alphas = 0, gammas = 0;
  for (int32_t u = 0; u < count; ++u) {
    const int32_t g0 = p.state_offset[size_t(u)], n = p.num_states[size_t(u)];
    const int32_t arcs = p.in_begin[size_t(g0 + n)] - p.in_begin[size_t(g0)];
    arc_offset.push_back(p.in_begin[size_t(g0)]);
    alpha_offset.push_back(alphas);
    gamma_offset.push_back(gammas);
    alphas += int64_t(frames[size_t(u)] + 1) * n;
    gammas += int64_t(frames[size_t(u)]) * arcs;
  }
  const int64_t bytes =
      alphas * 8 + gammas * 4 + p.states * (3 * 8 + 12) + int64_t(p.arc_source.size()) * 24;
  GMM_RETURN_IF_ERROR(SelectDevice(device_));
  if (absl::Status room =
          CheckDeviceRoom(device_, bytes,
                          absl::StrCat("the forward-backward of ", count, " utterances of ",
                                       p.frames, " frames needs"),
                          memory_budget_);
      !room.ok()) {
    if (count < 2) return room;
    // Half the utterances at a time: the second half's scores follow the first half's.
    const size_t half = graphs.size() / 2;
    int64_t first_rows = 0;
    for (size_t u = 0; u < half; ++u) first_rows += frames[u];
    GMM_ASSIGN_OR_RETURN(std::vector<PosteriorResult> first,
                         RunOnDevice(graphs.first(half), frames.first(half), device_scores, model,
                                     acoustic_scale, stream));
    GMM_ASSIGN_OR_RETURN(
        std::vector<PosteriorResult> second,
        RunOnDevice(graphs.subspan(half), frames.subspan(half),
                    device_scores + first_rows * model.NumPdfs(), model, acoustic_scale, stream));
    for (PosteriorResult& r : second) first.push_back(std::move(r));
    return first;
  }
  GMM_ASSIGN_OR_RETURN(auto d_state_offset, UploadToDevice(p.state_offset));
  GMM_ASSIGN_OR_RETURN(auto d_num_states, UploadToDevice(p.num_states));
  GMM_ASSIGN_OR_RETURN(auto d_start, UploadToDevice(p.start));
  GMM_ASSIGN_OR_RETURN(auto d_num_frames, UploadToDevice(p.num_frames));
  GMM_ASSIGN_OR_RETURN(auto d_frame_offset, UploadToDevice(p.frame_offset));
  GMM_ASSIGN_OR_RETURN(auto d_depth, UploadToDevice(p.epsilon_depth));
  GMM_ASSIGN_OR_RETURN(auto d_arc_offset, UploadToDevice(arc_offset));
  GMM_ASSIGN_OR_RETURN(auto d_alpha_offset, UploadToDevice(alpha_offset));
  GMM_ASSIGN_OR_RETURN(auto d_gamma_offset, UploadToDevice(gamma_offset));
  GMM_ASSIGN_OR_RETURN(auto d_in_begin, UploadToDevice(p.in_begin));
  GMM_ASSIGN_OR_RETURN(auto d_out_begin, UploadToDevice(p.out_begin));
  GMM_ASSIGN_OR_RETURN(auto d_final, UploadToDevice(p.final_cost));
  GMM_ASSIGN_OR_RETURN(auto d_source, UploadToDevice(p.arc_source));
  GMM_ASSIGN_OR_RETURN(auto d_dest, UploadToDevice(p.arc_dest));
  GMM_ASSIGN_OR_RETURN(auto d_pdf, UploadToDevice(p.arc_pdf));
  GMM_ASSIGN_OR_RETURN(auto d_weight, UploadToDevice(p.arc_weight));
  GMM_ASSIGN_OR_RETURN(auto d_out_arc, UploadToDevice(p.out_arc));
  GMM_ASSIGN_OR_RETURN(auto d_scratch, DeviceArray<double>::Allocate(size_t(3 * p.states)));
  GMM_ASSIGN_OR_RETURN(auto d_alpha, DeviceArray<double>::Allocate(size_t(alphas)));
  GMM_ASSIGN_OR_RETURN(auto d_gamma, DeviceArray<float>::Allocate(size_t(gammas)));
  GMM_ASSIGN_OR_RETURN(auto d_total, DeviceArray<double>::Allocate(size_t(count)));

  DeviceForwardBackwardBatch b;
  b.utterances = count;
  b.state_offset = d_state_offset.get();
  b.num_states = d_num_states.get();
  b.start = d_start.get();
  b.num_frames = d_num_frames.get();
  b.frame_offset = d_frame_offset.get();
  b.epsilon_depth = d_depth.get();
  b.arc_offset = d_arc_offset.get();
  b.alpha_offset = d_alpha_offset.get();
  b.gamma_offset = d_gamma_offset.get();
  b.in_begin = d_in_begin.get();
  b.out_begin = d_out_begin.get();
  b.final_cost = d_final.get();
  b.arc_source = d_source.get();
  b.arc_dest = d_dest.get();
  b.arc_pdf = d_pdf.get();
  b.arc_weight = d_weight.get();
  b.out_arc = d_out_arc.get();
  b.loglikes = device_scores;
  b.num_pdfs = model.NumPdfs();
  b.acoustic_scale = acoustic_scale;
  b.scratch = d_scratch.get();
  b.alpha = d_alpha.get();
  b.gamma = d_gamma.get();
  b.total = d_total.get();
  GMM_RETURN_IF_ERROR(LaunchForwardBackwardBatch(b, stream));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));

  std::vector<double> totals(static_cast<size_t>(count));
  std::vector<float> gamma(static_cast<size_t>(gammas));
  GMM_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(totals.data(), d_total.get(), totals.size() * 8, cudaMemcpyDeviceToHost));
  GMM_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(gamma.data(), d_gamma.get(), gamma.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<PosteriorResult> results(static_cast<size_t>(count));
  for (int32_t u = 0; u < count; ++u) {
    PosteriorResult& r = results[size_t(u)];
    r.total_log_likelihood = totals[size_t(u)];
    r.reached_final = r.total_log_likelihood > -std::numeric_limits<double>::infinity();
    if (!r.reached_final) continue;
    const int32_t a0 = arc_offset[size_t(u)];
    const int32_t g0 = p.state_offset[size_t(u)];
    const int32_t arcs = p.in_begin[size_t(g0 + p.num_states[size_t(u)])] - a0;
    // Each arc's slot among the utterance's distinct transition-ids, in increasing order: a
    // frame's posteriors are summed into the slots, then read out in that order.
    std::vector<int32_t> tids(p.arc_tid.begin() + a0, p.arc_tid.begin() + a0 + arcs);
    std::sort(tids.begin(), tids.end());
    tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
    std::vector<int32_t> slot(static_cast<size_t>(arcs));
    for (int32_t i = 0; i < arcs; ++i) {
      slot[size_t(i)] = int32_t(
          std::lower_bound(tids.begin(), tids.end(), p.arc_tid[size_t(a0 + i)]) - tids.begin());
    }
    std::vector<double> sums(tids.size(), 0.0);
    r.posteriors.resize(size_t(frames[size_t(u)]));
    for (int32_t t = 0; t < frames[size_t(u)]; ++t) {
      const float* row = gamma.data() + gamma_offset[size_t(u)] + int64_t(t) * arcs;
      for (int32_t i = 0; i < arcs; ++i) sums[size_t(slot[size_t(i)])] += row[i];
      for (size_t k = 0; k < tids.size(); ++k) {
        if (sums[k] > 0.0) r.posteriors[size_t(t)].emplace_back(tids[k], float(sums[k]));
        sums[k] = 0.0;
      }
    }
  }
  return results;
}

}  // namespace gmmscore
