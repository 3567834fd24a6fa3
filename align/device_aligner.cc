#include "align/device_aligner.h"

#include "absl/strings/str_cat.h"
#include "align/align_graph_preparation.h"
#include "align/careful_graph.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::vector<UtteranceAlignment>> DeviceAligner::Align(
    std::span<const UtteranceToAlign> batch, bool posteriors) {
  std::vector<UtteranceAlignment> results(batch.size());
  // The utterances whose graphs are ready, by their place in the batch; the device's inputs point
  // into graphs and readied, so both are reserved whole first.
  std::vector<size_t> ready;
  std::vector<AlignGraph> graphs, readied;
  graphs.reserve(batch.size());
  if (posteriors) readied.reserve(batch.size());
  std::vector<AlignInput> inputs;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto graph = PrepareExactAlignGraph(*batch[i].graph, model_, options_.transition_scale,
                                        options_.self_loop_scale);
    if (!graph.ok()) {
      results[i].status = graph.status();
      continue;
    }
    // The posteriors are over the readied graph itself, as the CPU aligner computes them.
    if (posteriors) readied.push_back(*graph);
    graphs.push_back(options_.careful ? MakeCarefulGraph(*graph) : *std::move(graph));
    inputs.push_back({&graphs.back(), batch[i].feats});
    ready.push_back(i);
  }
  if (inputs.empty()) return results;
  GMM_ASSIGN_OR_RETURN(std::vector<ViterbiResult> viterbi,
                       device_.Align(inputs, options_.acoustic_scale));

  std::vector<AlignInput> aligned;  // for the posteriors: the utterances that aligned
  std::vector<size_t> aligned_at;
  for (size_t k = 0; k < ready.size(); ++k) {
    UtteranceAlignment& r = results[ready[k]];
    ViterbiResult& v = viterbi[k];
    if (!v.reached_final) {
      r.status = absl::NotFoundError(
          absl::StrCat("no path reached a final state, len = ", inputs[k].feats->rows));
      continue;
    }
    r.transition_ids = std::move(v.transition_ids);
    r.score = v.score;
    r.log_likelihood = v.score / options_.acoustic_scale;
    r.frame_loglikes = std::move(v.frame_loglikes);
    if (posteriors) {
      aligned.push_back({&readied[k], inputs[k].feats});
      aligned_at.push_back(ready[k]);
    }
  }
  if (aligned.empty()) return results;
  GMM_ASSIGN_OR_RETURN(std::vector<PosteriorResult> posterior,
                       device_.Posteriors(aligned, options_.acoustic_scale));
  for (size_t k = 0; k < aligned.size(); ++k) {
    results[aligned_at[k]].posteriors = std::move(posterior[k].posteriors);
  }
  return results;
}

}  // namespace gmmscore
