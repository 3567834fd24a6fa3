#include "align/align_utterance.h"

#include "absl/strings/str_cat.h"
#include "align/align_graph_preparation.h"
#include "align/careful_graph.h"
#include "align/faster_viterbi.h"

namespace gmmscore {

absl::Status ValidateAlignOptions(const AlignOptions& o) {
  if ((o.retry_beam != 0.0f && o.retry_beam <= o.beam) || o.beam <= 0.0f) {
    return absl::InvalidArgumentError(
        absl::StrCat("beams do not make sense: beam ", o.beam, ", retry-beam ", o.retry_beam));
  }
  if (!(o.acoustic_scale > 0.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--acoustic-scale must be positive, is ", o.acoustic_scale));
  }
  return absl::OkStatus();
}

UtteranceAlignment AlignUtterance(const AlignOptions& options, const TransitionModel& model,
                                  AlignGraph graph, const Matrix& loglikes) {
  UtteranceAlignment result;
  if (loglikes.rows == 0) {
    result.status = absl::InvalidArgumentError("zero-length utterance");
    return result;
  }
  if (loglikes.cols != model.NumPdfs()) {
    result.status = absl::InvalidArgumentError(absl::StrCat(
        "scores for ", loglikes.cols, " pdfs, the transition model has ", model.NumPdfs()));
    return result;
  }
  auto readied =
      PrepareAlignGraph(std::move(graph), model, options.transition_scale, options.self_loop_scale);
  if (!readied.ok()) {
    result.status = readied.status();
    return result;
  }
  graph = options.careful ? MakeCarefulGraph(*readied) : *std::move(readied);

  FasterViterbi decoder(graph, model, {.beam = options.beam});
  decoder.Decode(loglikes, options.acoustic_scale);
  bool reached = decoder.ReachedFinal();
  if (!reached && options.retry_beam != 0.0f) {
    result.retried = true;
    decoder.set_beam(options.retry_beam);
    decoder.Decode(loglikes, options.acoustic_scale);
    reached = decoder.ReachedFinal();
  }
  if (!reached) {
    result.status =
        absl::NotFoundError(absl::StrCat("no path reached a final state, len = ", loglikes.rows));
    return result;
  }
  std::optional<ViterbiPath> path = decoder.BestPath();
  if (!path || path->transition_ids.size() != size_t(loglikes.rows)) {
    result.status = absl::InternalError("the best path does not have one transition-id a frame");
    return result;
  }
  result.transition_ids = std::move(path->transition_ids);
  result.words = std::move(path->words);
  result.score = -(path->graph_cost + path->acoustic_cost);
  result.log_likelihood = result.score / options.acoustic_scale;
  result.frame_loglikes.reserve(path->frame_acoustic_costs.size());
  for (float cost : path->frame_acoustic_costs) {
    result.frame_loglikes.push_back(cost * (-1.0f / options.acoustic_scale));
  }
  return result;
}

}  // namespace gmmscore
