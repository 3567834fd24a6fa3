// Parsing of HTK text MMFs: a tokenizer and a recursive-descent parser of the HTK Book grammar
// (section 7.10) that resolves macro references as it reads and yields the emitting states and
// HMMs the file defines. htk_model.cc builds the canonical model from them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gmmscore {

// An emitting state as written in the file, in a ~s macro or inside an HMM.
struct HtkStateDef {
  std::string name;
  int line = 0;
  bool used = false;  // by some HMM
  std::vector<float> weights;
  std::vector<float> means;      // row per Gaussian
  std::vector<float> variances;  // row per Gaussian
};

struct HtkTransP {
  int32_t n = 0;
  std::vector<float> probs;  // n x n, row-major
  int line = 0;
};

struct HtkHmmDef {
  std::string name;
  std::vector<int32_t> states;  // indexed by HTK state (1..n): index into the HtkStateDefs, or -1
  HtkTransP transp;
};

struct HtkMmf {
  int32_t dim = 0;                  // the vector size
  std::vector<HtkStateDef> states;  // in the order in which they are defined
  std::vector<HtkHmmDef> hmms;      // in file order, at least one
};

// `name` is what errors call the input: "NAME: line L: what".
absl::StatusOr<HtkMmf> ParseHtkMmf(std::string text, const std::string& name);

}  // namespace gmmscore
