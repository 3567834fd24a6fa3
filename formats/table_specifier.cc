#include "formats/table_specifier.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gmmscore {
namespace {

absl::StatusOr<TableSpecifier> Parse(const std::string& spec, bool for_writing) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos || colon + 1 == spec.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad specifier '", spec, "': expected TYPE:PATH, e.g. ark:feats.ark"));
  }
  TableSpecifier t;
  t.path = spec.substr(colon + 1);
  bool ark = false, scp = false, htk = false, sphinx = false;
  for (const absl::string_view opt : absl::StrSplit(spec.substr(0, colon), ',')) {
    if (opt == "ark")
      ark = true;
    else if (opt == "scp")
      scp = true;
    else if (opt == "htk")
      htk = true;
    else if (opt == "sphinx")
      sphinx = true;
    else if (opt == "t")
      t.text = true;
    else if (opt == "b")
      t.text = false;
    else if (opt == "f")
      t.flush = true;
    else if (opt == "nf")
      t.flush = false;
    else if (absl::StartsWith(opt, "dim=")) {
      if (!absl::SimpleAtoi(opt.substr(4), &t.sphinx_dim) || t.sphinx_dim < 1) {
        return absl::InvalidArgumentError(absl::StrCat("bad specifier '", spec, "': bad ", opt));
      }
    } else if (opt == "s" || opt == "cs" || opt == "o" || opt == "p" || opt == "bg" ||
               opt == "ns" || opt == "no" || opt == "np" || opt == "ncs") {
      continue;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("bad specifier '", spec, "': unknown option '", opt, "'"));
    }
  }
  if (ark && scp) {
    if (!for_writing) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad rspecifier '", spec, "': ark,scp is for writing"));
    }
    const auto comma = t.path.find(',');
    if (comma == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad wspecifier '", spec, "': ark,scp needs ARCHIVE,SCRIPT"));
    }
    t.script_path = t.path.substr(comma + 1);
    t.path = t.path.substr(0, comma);
    t.kind = TableKind::kArchiveAndScript;
  } else if (ark) {
    t.kind = TableKind::kArchive;
  } else if (scp) {
    t.kind = TableKind::kScript;
    if (htk) t.file_kind = FeatureFileKind::kHtk;
    if (sphinx) t.file_kind = FeatureFileKind::kSphinx;
    if (for_writing) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad wspecifier '", spec, "': write ark:F or ark,scp:F,S"));
    }
  } else if (htk || sphinx) {
    if (for_writing) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad wspecifier '", spec, "': scores are written as Kaldi archives"));
    }
    t.kind = htk ? TableKind::kHtkFile : TableKind::kSphinxFile;
    t.file_kind = htk ? FeatureFileKind::kHtk : FeatureFileKind::kSphinx;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("bad specifier '", spec, "': the type must be ark, scp, htk or sphinx"));
  }
  return t;
}

}  // namespace

absl::StatusOr<TableSpecifier> ParseRspecifier(const std::string& spec) {
  return Parse(spec, false);
}

absl::StatusOr<TableSpecifier> ParseWspecifier(const std::string& spec) {
  return Parse(spec, true);
}

bool IsTableSpecifier(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return false;
  for (const absl::string_view option : absl::StrSplit(spec.substr(0, colon), ',')) {
    if (option == "ark" || option == "scp") return true;
  }
  return false;
}

}  // namespace gmmscore
