// Kaldi's show-alignments (run under that name): alignments in human-readable form, each
// utterance's transition-ids cut into phones with the phones' names under them
// (align/show_alignment.h), on standard output.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "align/show_alignment.h"
#include "formats/kaldi_model_copy.h"
#include "formats/kaldi_tables.h"
#include "formats/symbol_table.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

absl::Status ShowAlignments(const std::string& phones_path, const std::string& model_path,
                            const std::string& alignments) {
  GMM_ASSIGN_OR_RETURN(const KaldiStoredModel model,
                       ReadKaldiStoredModel(model_path, /*transitions=*/true, /*gmms=*/false));
  GMM_ASSIGN_OR_RETURN(const SymbolNames phones, SymbolNames::ReadText(phones_path));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<Int32VectorTableReader> reader,
                       Int32VectorTableReader::Open(alignments));
  std::string key;
  std::vector<int32_t> alignment;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &alignment));
    if (!more) return absl::OkStatus();
    GMM_ASSIGN_OR_RETURN(
        const std::string text,
        ShowAlignment(
            *model.hmm, [&](int32_t phone) { return phones.Find(phone); }, key, alignment));
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
}

}  // namespace

int RunShowAlignments(int argc, char** argv) {
  constexpr char kProgram[] = "show-alignments";
  Args args(kProgram,
            "[options] <phone-syms> <model> <alignments-rspecifier>\n"
            "Display alignments in human-readable form\n"
            "e.g.: show-alignments phones.txt 1.mdl ark:1.ali\n"
            "See also: ali-to-phones, copy-int-vector");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  if (absl::Status s = ShowAlignments(pos[0], pos[1], pos[2]); !s.ok()) return Fail(kProgram, s);
  return 0;
}

}  // namespace gmmscore
