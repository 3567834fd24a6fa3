// Parser, checks, state naming and writer of the Sphinx mdef (see sphinx_mdef.h).
#include "formats/sphinx_mdef.h"

#include <map>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

absl::Status LineError(const std::string& path, int32_t line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": line ", line, ": ", what));
}

// The lines of a text file that are neither blank nor comments, with their line numbers.
class TextLines {
 public:
  explicit TextLines(const std::string& text) : text_(text) {}
  bool Next(std::vector<absl::string_view>* words) {
    while (pos_ < text_.size()) {
      size_t end = text_.find('\n', pos_);
      if (end == std::string::npos) end = text_.size();
      const absl::string_view line(text_.data() + pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      *words = absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
      if (!words->empty() && (*words)[0][0] != '#') return true;
    }
    return false;
  }
  int32_t line() const { return line_; }

 private:
  const std::string& text_;
  size_t pos_ = 0;
  int32_t line_ = 0;
};

// The six "N name" header lines, in any order.
absl::Status ParseMdefHeader(const std::string& path, TextLines& lines, Mdef& mdef, int32_t* n_tri,
                             int32_t* n_state_map) {
  const std::map<absl::string_view, int32_t*> fields = {{"n_base", &mdef.n_base},
                                                        {"n_tri", n_tri},
                                                        {"n_state_map", n_state_map},
                                                        {"n_tied_state", &mdef.n_tied_state},
                                                        {"n_tied_ci_state", &mdef.n_tied_ci_state},
                                                        {"n_tied_tmat", &mdef.n_tied_tmat}};
  std::set<absl::string_view> seen;
  std::vector<absl::string_view> words;
  while (seen.size() < fields.size()) {
    if (!lines.Next(&words)) return LineError(path, lines.line(), "the header is incomplete");
    const auto field = words.size() == 2 ? fields.find(words[1]) : fields.end();
    if (field == fields.end() || !absl::SimpleAtoi(words[0], field->second) || *field->second < 0) {
      return LineError(path, lines.line(),
                       "expected a header line \"N name\", name one of n_base, n_tri, "
                       "n_state_map, n_tied_state, n_tied_ci_state and n_tied_tmat");
    }
    seen.insert(field->first);
  }
  const int64_t n_phones = int64_t{mdef.n_base} + *n_tri;
  if (mdef.n_base < 1 || *n_state_map % n_phones != 0 || *n_state_map / n_phones < 2) {
    return LineError(path, lines.line(),
                     absl::StrCat("n_state_map ", *n_state_map, " is not a multiple (> 1) of the ",
                                  n_phones, " phones (n_base + n_tri, n_base > 0)"));
  }
  mdef.n_emit = static_cast<int32_t>(*n_state_map / n_phones - 1);
  return absl::OkStatus();
}

absl::StatusOr<int32_t> MdefIndex(const std::string& path, int32_t line, absl::string_view word,
                                  absl::string_view what) {
  int32_t v = 0;
  if (!absl::SimpleAtoi(word, &v) || v < 0) {
    return LineError(path, line, absl::StrCat("bad ", what, " \"", word, "\""));
  }
  return v;
}

// "base lft rt p attrib tmat senone... N".
absl::StatusOr<MdefPhone> ParseMdefRow(const std::string& path, int32_t line,
                                       const std::vector<absl::string_view>& w, int32_t n_emit) {
  const size_t n_words = 7 + size_t(n_emit);
  if (w.size() != n_words || w.back() != "N") {
    return LineError(path, line,
                     absl::StrCat("expected ", n_words, " fields: base lft rt p attrib tmat, ",
                                  n_emit, " senone ids and N"));
  }
  MdefPhone p;
  p.base = std::string(w[0]);
  p.left = std::string(w[1]);
  p.right = std::string(w[2]);
  p.position = std::string(w[3]);
  p.line = line;
  p.filler = w[4] == "filler";
  if (!p.filler && w[4] != "n/a") {
    return LineError(path, line, absl::StrCat("attrib \"", w[4], "\" is not filler or n/a"));
  }
  GMM_ASSIGN_OR_RETURN(p.tmat, MdefIndex(path, line, w[5], "transition matrix id"));
  for (int32_t k = 0; k < n_emit; ++k) {
    GMM_ASSIGN_OR_RETURN(int32_t s, MdefIndex(path, line, w[6 + k], "senone id"));
    p.senones.push_back(s);
  }
  return p;
}

// Base phones are unique and have "-" for lft, rt and p; triphones are made of base phones, have
// a word position b, e, i or s, and their base phone's attrib. `base_filler`: the base phones
// so far and whether each is a filler.
absl::Status CheckContext(const std::string& path, const MdefPhone& p, bool base_row,
                          const std::map<std::string, bool>& base_filler) {
  if (base_row) {
    if (!p.is_base() || p.right != "-" || p.position != "-") {
      return LineError(path, p.line, "a base phone needs \"-\" for lft, rt and p");
    }
    if (base_filler.contains(p.base)) {
      return LineError(path, p.line, absl::StrCat("base phone ", p.base, " appears twice"));
    }
    return absl::OkStatus();
  }
  for (const std::string* name : {&p.base, &p.left, &p.right}) {
    if (!base_filler.contains(*name)) {
      return LineError(path, p.line, absl::StrCat("unknown base phone ", *name));
    }
  }
  if (p.position.size() != 1 ||
      absl::string_view("besi").find(p.position[0]) == absl::string_view::npos) {
    return LineError(path, p.line, absl::StrCat("bad word position \"", p.position, "\""));
  }
  if (base_filler.at(p.base) != p.filler) {
    return LineError(path, p.line, absl::StrCat("attrib differs from base phone ", p.base, "'s"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status UnsupportedSphinxModel(const std::string& path, absl::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat(path, ": unsupported Sphinx model: ", what,
                   "; only fully continuous single-stream models can be read"));
}

absl::StatusOr<Mdef> ParseMdef(const std::string& path, const std::string& text) {
  if (absl::StartsWith(text, "BMDF") || absl::StartsWith(text, "FDMB")) {
    return UnsupportedSphinxModel(
        path, "binary model definition (pocketsphinx_mdef_convert -text converts)");
  }
  TextLines lines(text);
  std::vector<absl::string_view> words;
  if (!lines.Next(&words) || words.size() != 1 || words[0] != "0.3") {
    return LineError(path, lines.line(), "expected the format version 0.3");
  }
  Mdef mdef;
  int32_t n_tri = 0, n_state_map = 0;
  GMM_RETURN_IF_ERROR(ParseMdefHeader(path, lines, mdef, &n_tri, &n_state_map));
  std::map<std::string, bool> base_filler;
  // n_base + n_tri divides n_state_map (ParseMdefHeader), so it fits int32.
  const int32_t n_phones = static_cast<int32_t>(int64_t{mdef.n_base} + n_tri);
  for (int32_t i = 0; i < n_phones; ++i) {
    if (!lines.Next(&words)) {
      return LineError(path, lines.line(),
                       absl::StrCat("the file ends after ", i, " of ", n_phones, " phones"));
    }
    GMM_ASSIGN_OR_RETURN(MdefPhone phone, ParseMdefRow(path, lines.line(), words, mdef.n_emit));
    GMM_RETURN_IF_ERROR(CheckContext(path, phone, i < mdef.n_base, base_filler));
    if (i < mdef.n_base) base_filler[phone.base] = phone.filler;
    mdef.phones.push_back(std::move(phone));
  }
  if (lines.Next(&words)) {
    return LineError(path, lines.line(),
                     absl::StrCat("unexpected text after the ", n_phones, " phones"));
  }
  return mdef;
}

absl::Status CheckMdefRanges(const std::string& path, const Mdef& mdef, int32_t n_senone,
                             const std::string& tmats_path, int32_t n_tmat, int32_t n_emit) {
  if (mdef.n_emit != n_emit) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", mdef.n_emit,
                                                   " emitting states per phone, but ", tmats_path,
                                                   " has matrices for ", n_emit));
  }
  for (const MdefPhone& p : mdef.phones) {
    if (p.tmat >= mdef.n_tied_tmat || p.tmat >= n_tmat) {
      return LineError(path, p.line,
                       absl::StrCat("transition matrix ", p.tmat, " is out of range (n_tied_tmat ",
                                    mdef.n_tied_tmat, ", ", n_tmat, " in ", tmats_path, ")"));
    }
    for (int32_t s : p.senones) {
      if (s >= mdef.n_tied_state || s >= n_senone) {
        return LineError(
            path, p.line,
            absl::StrCat("senone ", s, " is not a state of the model (n_tied_state ",
                         mdef.n_tied_state, ", ", n_senone, " senones in mixture_weights)"));
      }
    }
  }
  return absl::OkStatus();
}

namespace {

std::string PhoneLabel(const MdefPhone& p) {
  if (p.is_base()) return p.base;
  return absl::StrCat(p.base, "(", p.left, ",", p.right, ",", p.position, ")");
}

// "AA_0" for the first state of base phone AA, "AA(B,C,i)_state0" for a triphone's.
std::string StateName(const MdefPhone& p, int32_t k) {
  return absl::StrCat(PhoneLabel(p), p.is_base() ? "_" : "_state", k);
}

// The phone (label only) that StateName() made `name` for, as state k; nullopt for other names.
std::optional<MdefPhone> PhoneOfStateName(absl::string_view name, int32_t k) {
  if (name.empty() || name.find_first_of(" \t\r\n") != absl::string_view::npos) return std::nullopt;
  MdefPhone p;
  if (absl::ConsumeSuffix(&name, absl::StrCat("_state", k))) {
    const size_t open = name.find('(');
    if (open == 0 || open == absl::string_view::npos || !absl::ConsumeSuffix(&name, ")")) {
      return std::nullopt;
    }
    const std::vector<std::string> context = absl::StrSplit(name.substr(open + 1), ',');
    if (context.size() != 3) return std::nullopt;
    p.base = std::string(name.substr(0, open));
    p.left = context[0];
    p.right = context[1];
    p.position = context[2];
    return p;
  }
  if (!absl::ConsumeSuffix(&name, absl::StrCat("_", k)) || name.empty()) return std::nullopt;
  p.base = std::string(name);
  return p;
}

}  // namespace

std::vector<std::string> StateNames(const Mdef& mdef, int32_t n_senone) {
  std::vector<std::string> names(n_senone);
  for (const MdefPhone& p : mdef.phones) {
    for (int32_t k = 0; k < mdef.n_emit; ++k) {
      if (names[p.senones[k]].empty()) names[p.senones[k]] = StateName(p, k);
    }
  }
  for (int32_t s = 0; s < n_senone; ++s) {
    if (names[s].empty()) names[s] = absl::StrCat("senone", s);
  }
  return names;
}

bool LabelPhones(const std::vector<std::string>& state_names, std::vector<MdefPhone>& phones) {
  std::vector<bool> seen(state_names.size(), false);
  for (MdefPhone& p : phones) {
    for (size_t k = 0; k < p.senones.size(); ++k) {
      if (seen[p.senones[k]]) continue;
      seen[p.senones[k]] = true;
      std::optional<MdefPhone> label =
          PhoneOfStateName(state_names[p.senones[k]], static_cast<int32_t>(k));
      if (!label || (!p.base.empty() && PhoneLabel(*label) != PhoneLabel(p))) return false;
      p.base = label->base;
      p.left = label->left;
      p.right = label->right;
      p.position = label->position;
    }
  }
  std::map<std::string, bool> base_filler;
  bool triphones_started = false;
  for (MdefPhone& p : phones) {
    if (p.base.empty() || (p.is_base() && triphones_started)) return false;
    triphones_started = !p.is_base();
    p.filler =
        p.base == "SIL" || (p.base.size() > 2 && p.base.front() == '+' && p.base.back() == '+');
    if (!CheckContext("", p, p.is_base(), base_filler).ok()) return false;
    if (p.is_base()) base_filler[p.base] = p.filler;
  }
  return true;
}

std::string FormatMdef(const Mdef& m) {
  const int32_t n_phones = static_cast<int32_t>(m.phones.size());
  std::string out =
      absl::StrCat("# Written by gmmscore\n0.3\n", m.n_base, " n_base\n", n_phones - m.n_base,
                   " n_tri\n", n_phones * (m.n_emit + 1), " n_state_map\n", m.n_tied_state,
                   " n_tied_state\n", m.n_tied_ci_state, " n_tied_ci_state\n", m.n_tied_tmat,
                   " n_tied_tmat\n", "#\n# base lft rt p attrib tmat ... state ids ... N\n");
  for (const MdefPhone& p : m.phones) {
    absl::StrAppend(&out, p.base, " ", p.left, " ", p.right, " ", p.position, " ",
                    p.filler ? "filler" : "n/a", " ", p.tmat, " ", absl::StrJoin(p.senones, " "),
                    " N\n");
  }
  return out;
}

}  // namespace gmmscore
