// The Sphinx text model definition (mdef, format 0.3): parsing and checking it, naming senones
// after the phone states that use them, recovering phones from those names, and writing it.
// Internal to the Sphinx model reader and writer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gmmscore {

// One mdef row: a base (CI) phone, or a triphone with its contexts and word position.
struct MdefPhone {
  std::string base;
  std::string left = "-";
  std::string right = "-";
  std::string position = "-";
  bool filler = false;
  int32_t tmat = 0;
  std::vector<int32_t> senones;  // one per emitting state
  int32_t line = 0;              // where it was read
  bool is_base() const { return left == "-"; }
};

struct Mdef {
  int32_t n_base = 0;
  int32_t n_tied_state = 0;
  int32_t n_tied_ci_state = 0;
  int32_t n_tied_tmat = 0;
  int32_t n_emit = 0;
  std::vector<MdefPhone> phones;  // base phones first
};

// The error for a Sphinx model that ReadSphinxModel() does not support.
absl::Status UnsupportedSphinxModel(const std::string& path, absl::string_view what);

// `text` is the content of the mdef file at `path`, which errors name.
absl::StatusOr<Mdef> ParseMdef(const std::string& path, const std::string& text);

// Every senone and matrix the mdef names must exist in its header and in the parameter files:
// `n_senone` senones in mixture_weights, `n_tmat` matrices of `n_emit` emitting states in
// `tmats_path`.
absl::Status CheckMdefRanges(const std::string& path, const Mdef& mdef, int32_t n_senone,
                             const std::string& tmats_path, int32_t n_tmat, int32_t n_emit);

// Each senone is named after the first phone state, in mdef order, that uses it.
std::vector<std::string> StateNames(const Mdef& mdef, int32_t n_senone);

// Gives each phone the label of the states StateNames() named after it, and the attrib filler
// to SIL and +NOISE+-style phones. False when a phone is left without a label, or the labels do
// not make a valid mdef.
bool LabelPhones(const std::vector<std::string>& state_names, std::vector<MdefPhone>& phones);

std::string FormatMdef(const Mdef& m);

}  // namespace gmmscore
