// Speaker-adapted alignment in one call, as Kaldi's steps/align_fmllr.sh does it in a script:
//   1. the speaker-independent features aligned with the alignment model (final.alimdl, or the
//      model itself where there is none);
//   2. per speaker, the frames' Gaussian posteriors under the alignment model (silence phones
//      weighted, by default left out) accumulated into fMLLR statistics of the model, and a
//      transform estimated (train/fmllr.h; gmm-post-to-gpost | gmm-est-fmllr-gpost);
//   3. each speaker's features transformed, and aligned again with the model.
// The passes go through archives in a temporary folder, as the script's go through files. Every
// pass is tools/align_table.h's AlignTable, with its log lines and counts.
#pragma once

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "align/align_utterance.h"
#include "kernels/backend.h"
#include "tools/align_table.h"
#include "cli/args.h"
#include "train/fmllr.h"

namespace gmmscore {

struct AlignFmllrOptions {
  AlignOptions align;           // both passes
  std::string alignment_model;  // empty: the model itself (a model without final.alimdl)
  std::string spk2utt;          // rspecifier; required
  std::set<int32_t> silence;    // phones whose posteriors are scaled by silence_weight
  float silence_weight = 0.0f;
  FmllrOptions fmllr;
  std::string transforms_out;  // optional wspecifier: the transforms by speaker
};

// What gmmscore align's --fmllr and its options set: the fields of AlignFmllrOptions that take a
// value as given, and the text of those parsed after (FmllrAlignOptionsFrom).
struct FmllrAlignArgs {
  bool fmllr = false;          // --fmllr
  AlignFmllrOptions options;   // all but align, silence and fmllr.update
  std::string silence_phones;  // P1:P2:...
  std::string update_type = FmllrUpdateName(options.fmllr.update);
};

// gmmscore align's --fmllr and its options (Kaldi's align_fmllr.sh defaults: silence left out of
// the statistics, full transforms), bound to *fmllr.
void AddFmllrAlignOptions(Args& args, FmllrAlignArgs* fmllr);
// The options they describe, each pass aligning as `align`.
absl::StatusOr<AlignFmllrOptions> FmllrAlignOptionsFrom(const FmllrAlignArgs& fmllr,
                                                        const AlignOptions& align);

// Aligns graphs_in's utterances against feats_in (the speaker-independent features) with
// `model_path`, speaker-adapted as above; the final alignments go to `out` as AlignTable writes
// them. `request` chooses where the frames are scored (both passes).
absl::StatusOr<AlignTableSummary> AlignTableWithFmllr(
    const AlignFmllrOptions& options, const BackendRequest& request, const std::string& model_path,
    const std::string& graphs_in, const std::string& feats_in, const AlignTableOutputs& out,
    const std::string& program, std::FILE* log);

}  // namespace gmmscore
