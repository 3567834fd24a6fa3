// Aligning a table of utterances as Kaldi's gmm-align-compiled does: for every graph of the
// graphs table (in its order), the features of the same key, aligned by an Aligner
// (align/aligner.h: here, on a device, or on a server); the alignment, the score and the
// per-frame log-likelihoods written where asked. An utterance that cannot be aligned (no features,
// no frames, a graph that does not fit the model, no final state reached) is counted and warned
// about, and the rest go on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "align/aligner.h"
#include "formats/kaldi_fst.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_lookup.h"
#include "kernels/backend.h"
#include "model/gmm_model.h"

namespace gmmscore {

struct AlignTableOutputs {
  Int32VectorTableWriter* alignments = nullptr;
  FloatTableWriter* scores = nullptr;                // optional
  FloatVectorTableWriter* frame_loglikes = nullptr;  // optional
  std::ostream* ctm = nullptr;  // optional: phone segments as ali-to-phones --ctm-output
  // Optional, where the model is here: each aligned utterance's forward-backward posteriors over
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

// The aligner `gmmscore align` runs on a backend: the device's exact aligner where the backend
// has one (backend.scorer unused), else Kaldi's beam-pruned aligner over the backend's scorer.
// model and backend must outlive it.
std::unique_ptr<Aligner> MakeAligner(const AlignOptions& options, const GmmModel& model,
                                     AlignBackend& backend);

// Aligns every graph of graphs against its features from feats with aligner (made with options),
// in batches of its limits, the results written in the table's order. model: the model aligned
// with, where it is here (it checks the features' dimension and names the CTM's phones); null
// where it is elsewhere (a server's: outputs.ctm must be null). Progress and warnings go to log in
// Kaldi's words ("LOG (program) UTT", "WARNING (program) No features for utterance UTT",
// "Retrying utterance ...", "Did not successfully decode file ..."). Fails only where the tables
// or the aligner do (a graph or feature archive that cannot be read, an output that cannot be
// written, a device error).
absl::StatusOr<AlignTableSummary> AlignTable(const AlignOptions& options, Aligner& aligner,
                                             const GmmModel* model, FstTableReader* graphs,
                                             MatrixLookup* feats, const AlignTableOutputs& out,
                                             const std::string& program, std::FILE* log);

// Kaldi's closing lines: "Overall log-likelihood per frame is L over N frames.", "Retried R out of
// T utterances.", "Done D, errors on E".
void LogAlignSummary(const AlignTableSummary& summary, const std::string& program, std::FILE* log);

}  // namespace gmmscore
