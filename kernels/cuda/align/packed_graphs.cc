#include "kernels/cuda/align/packed_graphs.h"

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_device.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<PackedGraphs> PackGraphs(std::span<const AlignGraph* const> graphs,
                                        std::span<const int32_t> frames,
                                        const TransitionModel& model) {
  PackedGraphs p;
  for (size_t u = 0; u < graphs.size(); ++u) {
    const AlignGraph& g = *graphs[u];
    const auto fail = [u](const absl::Status& s) {
      return absl::InvalidArgumentError(absl::StrCat("utterance ", u, ": ", s.message()));
    };
    if (absl::Status s = ValidateAlignGraph(g, model.NumTransitionIds()); !s.ok()) return fail(s);
    if (g.start < 0) return fail(absl::InvalidArgumentError("empty decoding graph"));
    absl::StatusOr<int32_t> eps = EpsilonDepth(g);
    if (!eps.ok()) return fail(eps.status());
    p.state_offset.push_back(int32_t(p.states));
    p.num_states.push_back(g.num_states());
    p.start.push_back(g.start);
    p.num_frames.push_back(frames[u]);
    p.epsilon_depth.push_back(*eps);
    p.frame_offset.push_back(p.frames);
    std::vector<std::vector<int32_t>> incoming(size_t(g.num_states()));
    std::vector<int32_t> source_of(g.arcs.size());
    for (int32_t s = 0; s < g.num_states(); ++s) {
      for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
        incoming[size_t(g.arcs[size_t(a)].next)].push_back(a);
        source_of[size_t(a)] = s;
      }
    }
    std::vector<int32_t> packed_index(g.arcs.size());  // graph arc -> global packed arc
    for (int32_t s = 0; s < g.num_states(); ++s) {
      p.in_begin.push_back(int32_t(p.arc_source.size()));
      p.final_cost.push_back(g.final_cost[size_t(s)]);
      for (int32_t a : incoming[size_t(s)]) {
        const GraphArc& arc = g.arcs[size_t(a)];
        packed_index[size_t(a)] = int32_t(p.arc_source.size());
        p.arc_source.push_back(source_of[size_t(a)]);
        p.arc_dest.push_back(s);
        p.arc_pdf.push_back(arc.ilabel == 0 ? -1 : model.TransitionIdToPdf(arc.ilabel));
        p.arc_tid.push_back(arc.ilabel);
        p.arc_weight.push_back(arc.weight);
      }
    }
    for (int32_t s = 0; s < g.num_states(); ++s) {
      p.out_begin.push_back(int32_t(p.out_arc.size()));
      for (int32_t a = g.arc_begin[size_t(s)]; a < g.arc_begin[size_t(s) + 1]; ++a) {
        p.out_arc.push_back(packed_index[size_t(a)]);
      }
    }
    p.states += g.num_states();
    p.frames += frames[u];
  }
  p.in_begin.push_back(int32_t(p.arc_source.size()));
  p.out_begin.push_back(int32_t(p.out_arc.size()));
  return p;
}

absl::StatusOr<UploadedScores> UploadScores(std::span<const ViterbiUtterance> utterances,
                                            const TransitionModel& model, int device) {
  UploadedScores up;
  int64_t rows = 0;
  for (size_t u = 0; u < utterances.size(); ++u) {
    const Matrix& ll = *utterances[u].loglikes;
    if (ll.cols != model.NumPdfs()) {
      return absl::InvalidArgumentError(absl::StrCat("utterance ", u, ": scores for ", ll.cols,
                                                     " pdfs, the model has ", model.NumPdfs()));
    }
    up.graphs.push_back(utterances[u].graph);
    up.frames.push_back(ll.rows);
    rows += ll.rows;
  }
  GMM_RETURN_IF_ERROR(CheckDeviceRoom(device, rows * model.NumPdfs() * int64_t(sizeof(float)),
                                      absl::StrCat("the scores of ", rows, " frames need")));
  GMM_ASSIGN_OR_RETURN(up.scores,
                       DeviceArray<float>::Allocate(size_t(rows) * size_t(model.NumPdfs())));
  float* at = up.scores.get();
  for (const ViterbiUtterance& u : utterances) {
    GMM_CUDA_RETURN_IF_ERROR(cudaMemcpy(at, u.loglikes->data.data(),
                                        u.loglikes->data.size() * sizeof(float),
                                        cudaMemcpyHostToDevice));
    at += u.loglikes->data.size();
  }
  return up;
}

}  // namespace gmmscore
