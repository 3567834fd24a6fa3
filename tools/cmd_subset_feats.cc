// Kaldi's subset-feats (run under that name): the first --n matrices of a table, or those whose
// keys an --include file lists (or does not: --exclude), as train_mono.sh takes its first
// utterances for gmm-init-mono.
#include <cstdio>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "formats/kaldi_stream.h"
#include "formats/matrix_table.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "subset-feats";

// The first field of each line of a file (an rxfilename), as Kaldi's --include/--exclude.
absl::StatusOr<std::set<std::string>> ReadKeys(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  std::set<std::string> keys;
  std::string line;
  for (int64_t number = 1; std::getline(input->stream(), line); ++number) {
    const absl::string_view stripped = absl::StripLeadingAsciiWhitespace(line);
    const std::string key(stripped.substr(0, stripped.find_first_of(" \t")));
    if (key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(input->name(), ":", number, ": empty line (expected a key first)"));
    }
    keys.insert(key);
  }
  GMM_RETURN_IF_ERROR(input->Close());
  return keys;
}

// Copies the entries keep() takes, stopping after `limit` of them (negative: no limit).
template <typename Keep>
absl::Status Copy(const std::string& in, const std::string& out, int64_t limit, Keep keep) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader, MatrixTableReader::Open(in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer, MatrixTableWriter::Open(out));
  std::string key;
  Matrix feats;
  for (int64_t copied = 0; limit < 0 || copied < limit;) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &feats));
    if (!more) break;
    if (!keep(key)) continue;
    GMM_RETURN_IF_ERROR(writer->Write(key, feats));
    ++copied;
  }
  return writer->Close();
}

}  // namespace

int RunSubsetFeats(int argc, char** argv) {
  Args args(kProgram,
            "[options] IN-RSPECIFIER OUT-WSPECIFIER\n"
            "Copies a subset of a table of feature matrices: the first --n, or the keys listed\n"
            "in an --include file, or all but those of an --exclude file.\n"
            "e.g.: subset-feats --n=10 ark:- ark:-");
  int32_t n = 10;
  std::string include, exclude;
  args.Register("n", &n, "if nonnegative, copy the first n feature files")
      .Register("include", &include, "text file whose lines' first fields are the keys to copy")
      .Register("exclude", &exclude,
                "text file whose lines' first fields are the keys not to copy");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  absl::Status s;
  if (!include.empty() || !exclude.empty()) {
    if (n != 10) {  // as Kaldi's: --n at its default is taken for not given
      s = absl::InvalidArgumentError("Should not have both --include/--exclude and --n option!");
    } else if (!include.empty() && !exclude.empty()) {
      s = absl::InvalidArgumentError("should not have both --exclude and --include option!");
    } else {
      auto keys = ReadKeys(include.empty() ? exclude : include);
      const bool including = !include.empty();
      s = keys.ok()
              ? Copy(pos[0], pos[1], -1,
                     [&](const std::string& key) { return (keys->count(key) > 0) == including; })
              : keys.status();
    }
  } else if (n <= 0) {
    s = absl::InvalidArgumentError(
        absl::StrCat("Invalid option --n=", n, ". Should be at least 1"));
  } else {
    s = Copy(pos[0], pos[1], n, [](const std::string&) { return true; });
  }
  if (!s.ok()) return Fail(kProgram, s);
  return 0;
}

}  // namespace gmmscore
