// Kaldi's align-equal-compiled (run under that name): the flat start's first alignment, a random
// path through each utterance's graph stretched evenly to its frames (align/equal_align.h), drawn
// as Kaldi draws it for that key, so that train_mono.sh's first statistics are Kaldi's.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "align/equal_align.h"
#include "formats/kaldi_fst.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_lookup.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/kaldi_random.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "align-equal-compiled";

void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

struct Counts {
  int64_t done = 0;
  int64_t no_feats = 0;
  int64_t errors = 0;
};

absl::Status AlignEqual(const std::string& graphs_in, const std::string& feats_in,
                        const std::string& ali_out, Counts* counts) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<FstTableReader> graphs, FstTableReader::Open(graphs_in));
  GMM_ASSIGN_OR_RETURN(MatrixLookup feats, MatrixLookup::Open(feats_in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<Int32VectorTableWriter> writer,
                       Int32VectorTableWriter::Open(ali_out));
  std::string key;
  AlignGraph graph;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, graphs->Next(&key, &graph));
    if (!more) break;
    GMM_ASSIGN_OR_RETURN(const std::optional<Matrix> m, feats.Take(key));
    if (!m.has_value()) {
      Warn("No features for utterance " + key);
      ++counts->no_feats;
      continue;
    }
    if (m->rows == 0) {
      Warn("Zero-length utterance: " + key);
      ++counts->errors;
      continue;
    }
    if (graph.start < 0 || graph.num_states() == 0) {
      Warn("Empty decoding graph for " + key);
      ++counts->errors;
      continue;
    }
    absl::StatusOr<std::vector<int32_t>> alignment = EqualAlign(graph, m->rows, KaldiKeySeed(key));
    if (!alignment.ok()) {
      Warn("EqualAlign: " + std::string(alignment.status().message()));
      Warn("AlignEqual: did not align utterence " + key);  // sic, as Kaldi spells it
      ++counts->errors;
      continue;
    }
    GMM_RETURN_IF_ERROR(writer->Write(key, *alignment));
    ++counts->done;
  }
  return writer->Close();
}

}  // namespace

int RunAlignEqualCompiled(int argc, char** argv) {
  Args args(kProgram,
            "[options] GRAPHS-RSPECIFIER FEATURES-RSPECIFIER ALIGNMENTS-WSPECIFIER\n"
            "Writes an equally spaced alignment along a random path through each graph (for\n"
            "training from a flat start).\n"
            "e.g.: align-equal-compiled 1.fsts scp:train.scp ark:equal.ali");
  bool binary = true;  // accepted, as Kaldi's is: the wspecifier says how the table is written
  args.Register("binary", &binary, "write output in binary mode");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  Counts counts;
  if (absl::Status s = AlignEqual(pos[0], pos[1], pos[2], &counts); !s.ok()) {
    return Fail(kProgram, s);
  }
  if (counts.done != 0 && counts.no_feats == 0 && counts.errors == 0) {
    KaldiLog(stderr, "LOG", kProgram, absl::StrCat("Success: done ", counts.done, " utterances."));
  } else {
    Warn(absl::StrCat("Computed ", counts.done, " alignments; ", counts.no_feats,
                      " lacked features, ", counts.errors, " had other errors."));
  }
  return counts.done != 0 ? 0 : 1;
}

}  // namespace gmmscore
