// Kaldi-style table specifiers: where a program reads a table from (rspecifier) and writes one
// to (wspecifier).
//   ark:F  ark,t:F  scp:F  ark,scp:F,S  ark:-  scp:-       (Kaldi archives and scripts)
//   htk:F  sphinx:F  scp,htk:F  scp,sphinx:F               (HTK / Sphinx feature files)
// F and S are Kaldi's extended filenames (formats/kaldi_stream.h): files, "-" for the standard
// streams, "CMD |" to read a command's output, "| CMD" to write to a command.
// Writers: "t" text, "b" binary (the last one wins), "f" flush after each entry ("nf" not).
// Options Kaldi accepts that change nothing here are allowed: o, s, cs, p, bg and their
// negations no, ns, ncs, np. "dim=N" sets the Sphinx .mfc frame size (default 13).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace gmmscore {

enum class TableKind { kArchive, kScript, kArchiveAndScript, kHtkFile, kSphinxFile };
enum class FeatureFileKind { kKaldi, kHtk, kSphinx };  // what the entries of a script hold

struct TableSpecifier {
  TableKind kind = TableKind::kArchive;
  FeatureFileKind file_kind = FeatureFileKind::kKaldi;
  bool text = false;        // ",t": write text
  bool flush = false;       // ",f": flush after each entry
  int32_t sphinx_dim = 13;  // "dim=N"
  std::string path;         // "-" for the standard stream
  std::string script_path;  // ark,scp:ARK,SCP
};

absl::StatusOr<TableSpecifier> ParseRspecifier(const std::string& spec);
// Whether spec names a table ("ark:...", "scp:...", "ark,t:..."), not a single file: Kaldi's
// tools that take either (compute-cmvn-stats, feat-to-dim) decide by this, as ClassifyWspecifier.
bool IsTableSpecifier(const std::string& spec);
absl::StatusOr<TableSpecifier> ParseWspecifier(const std::string& spec);

}  // namespace gmmscore
