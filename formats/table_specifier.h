// Kaldi-style table specifiers: where a program reads features from (rspecifier) and writes
// matrices to (wspecifier).
//   ark:F  ark,t:F  scp:F  ark,scp:F,S  ark:-  scp:-       (Kaldi archives and scripts)
//   htk:F  sphinx:F  scp,htk:F  scp,sphinx:F               (HTK / Sphinx feature files)
// Options Kaldi accepts but that do not change reading here (s, cs, o, p, bg, b, f, nf) are
// allowed; "t" asks a writer for text; "dim=N" sets the Sphinx .mfc frame size (default 13).
// A bare "-" means the standard stream.
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
  int32_t sphinx_dim = 13;  // "dim=N"
  std::string path;         // "-" for the standard stream
  std::string script_path;  // ark,scp:ARK,SCP
};

absl::StatusOr<TableSpecifier> ParseRspecifier(const std::string& spec);
absl::StatusOr<TableSpecifier> ParseWspecifier(const std::string& spec);

}  // namespace gmmscore
