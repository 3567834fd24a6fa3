// What gmmscore asks of OpenFst's library (Debian's libfst-dev), behind one table of functions, so
// that a program either links OpenFst in or loads it the first time it needs an FST: libfst costs
// every process that links it 4 ms at start (its relocations and the FST types it registers), and
// most runs of a Kaldi tool never touch an FST (docs/PERFORMANCE.md, "Start-up").
//
// Only fst/openfst.cc sees OpenFst's headers (which compile as C++17 only). The functions take and
// give gmmscore's own graphs (model/align_graph.h) and report errors as text, so that a loaded
// module, which has its own C++ runtime beside libfst's, shares no library state with the program.
//
// The algorithms are OpenFst's: composition (Mohri, Pereira and Riley, "Weighted finite-state
// transducers in speech recognition"), epsilon removal and determinization (Mohri, "Finite-state
// transducers in language and speech processing"), and minimization of the acceptor that encodes
// each arc's labels and weight as one label.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model/align_graph.h"

namespace gmmscore {

struct OpenFstFunctions {
  // Changes whenever a signature below does: a module of another build is refused.
  static constexpr int32_t kVersion = 2;
  int32_t version = kVersion;

  // Each returns false and sets *error where OpenFst refuses its input.

  // OpenFst's binary VectorFst<StdArc> (what a Kaldi graph table holds after the key), read by
  // OpenFst as a whole; `name` is the input's name in OpenFst's own messages.
  bool (*read_vector_fst)(const std::string& bytes, const std::string& name, VectorGraph* graph,
                          std::string* error);
  // The graph as OpenFst writes a VectorFst<StdArc> in its binary form.
  bool (*write_vector_fst)(const VectorGraph& graph, const std::string& name, std::string* bytes,
                           std::string* error);
  // A text symbol table ("SYMBOL ID" a line) as SymbolTable::ReadText reads the file `path`.
  bool (*read_symbol_table)(const std::string& path,
                            std::vector<std::pair<int64_t, std::string>>* symbols,
                            std::string* error);
  // a ∘ b (align/fst_ops.h).
  bool (*compose)(const VectorGraph& a, const VectorGraph& b, VectorGraph* out, std::string* error);
  // align/fst_ops.h's Determinize and MinimizeEncoded.
  bool (*determinize)(const VectorGraph& graph, float delta, int32_t max_kept_ilabel,
                      VectorGraph* out, std::string* error);
  bool (*minimize_encoded)(const VectorGraph& graph, float delta, VectorGraph* out,
                           std::string* error);
};

// The functions, from whichever implementation the program links (fst/CMakeLists.txt): OpenFst
// linked in, or the module libgmmscore_openfst.so loaded at the first call. An error where the
// module cannot be loaded says where it was looked for.
absl::StatusOr<const OpenFstFunctions*> OpenFst();

}  // namespace gmmscore
