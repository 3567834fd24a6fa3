// Aligning a table of utterances as Kaldi's gmm-align-compiled does: for every graph of the
// graphs table (in its order), the features of the same key, scored once per frame and pdf, then
// aligned (align/align_utterance.h); the alignment, the score and the per-frame log-likelihoods
// written where asked. An utterance that cannot be aligned (no features, no frames, a graph that
// does not fit the model, no final state reached) is counted and warned about, and the rest go on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "align/align_utterance.h"
#include "formats/kaldi_fst.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_lookup.h"
#include "kernels/batch_aligner.h"
#include "kernels/fused_scorer.h"
#include "model/gmm_model.h"

namespace gmmscore {

struct AlignTableOutputs {
  Int32VectorTableWriter* alignments = nullptr;
  FloatTableWriter* scores = nullptr;                // optional
  FloatVectorTableWriter* frame_loglikes = nullptr;  // optional
  std::ostream* ctm = nullptr;  // optional: phone segments as ali-to-phones --ctm-output
  // Optional, CPU aligner only: each aligned utterance's forward-backward posteriors over
  // transition-ids (all paths, not only the best).
  PosteriorTableWriter* posteriors = nullptr;
};

// What gmm-align-compiled sums up at the end.
struct AlignTableSummary {
  int64_t done = 0;
  int64_t errors = 0;
  int64_t retried = 0;
  double total_log_likelihood = 0.0;  // of the aligned utterances, unscaled
  int64_t frames = 0;                 // of the aligned utterances
};

// Aligns every graph of graphs against its features from feats: scored by scorer (one model:
// model's pdfs) and aligned by the CPU aligner, or, where aligner is given (scorer unused), scored
// and aligned in batches on its device (exact Viterbi: the beams do not prune there). Progress and
// warnings go to log in Kaldi's words ("LOG (program) UTT", "WARNING (program) No features for
// utterance UTT", "Retrying utterance ...", "Did not successfully decode file ..."). Fails only
// where the tables do (a graph or feature archive that cannot be read, an output that cannot be
// written).
absl::StatusOr<AlignTableSummary> AlignTable(const AlignOptions& options, const GmmModel& model,
                                             const FusedScorer* scorer, BatchAligner* aligner,
                                             FstTableReader* graphs, MatrixLookup* feats,
                                             const AlignTableOutputs& out,
                                             const std::string& program, std::FILE* log);

// An utterance aligned elsewhere (a gmmscored's Align RPC, tools/align_through_server.h).
struct RemoteAlignment {
  std::vector<int32_t> transition_ids;
  float score = 0.0f;
  bool retried = false;
};
// Aligns one utterance: its key, features and graph (in OpenFst's binary form) with the options.
// FAILED_PRECONDITION where no path reached a final state; other errors are that utterance's.
// Called from several threads at once.
using RemoteAligner = std::function<absl::StatusOr<RemoteAlignment>(
    const AlignOptions& options, const std::string& key, const Matrix& features,
    std::string graph)>;

// The same through `align`, `parallel` utterances at a time, the results written in the table's
// order; the scores, the alignments and the log lines as offline (outputs.ctm and
// outputs.posteriors are not available: the transition model is elsewhere).
absl::StatusOr<AlignTableSummary> AlignTableRemote(const AlignOptions& options,
                                                   const RemoteAligner& align, int32_t parallel,
                                                   FstTableReader* graphs, MatrixLookup* feats,
                                                   const AlignTableOutputs& out,
                                                   const std::string& program, std::FILE* log);

// Kaldi's closing lines: "Overall log-likelihood per frame is L over N frames.", "Retried R out of
// T utterances.", "Done D, errors on E".
void LogAlignSummary(const AlignTableSummary& summary, const std::string& program, std::FILE* log);

}  // namespace gmmscore
