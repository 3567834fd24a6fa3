// The tree of a monophone system, as Kaldi's gmm-init-mono makes it (MonophoneContextDependency
// and MonophoneContextDependencyShared in src/tree/context-dep.cc, through GetStubMap in
// src/tree/build-tree-utils.cc): N = 1, P = 0, and the phones of each set share their pdfs, one
// pdf per pdf class of the set. gmm-init-mono without --shared-phones gives each phone a set of
// its own.
//
// The map's shape, which the tree file shows and so must be Kaldi's for the file to be Kaldi's:
//   - one set: a table on the pdf class, with one constant per class (as many classes as the set's
//     phone with the most);
//   - sets all of one phone, no more of them than twice the largest phone: a table on the phone,
//     each entry the map of its one-phone set;
//   - otherwise a split on the phone: the phones of the first half of the sets (count / 2 sets,
//     rounded down) are the yes-set, the map of the first half the yes child, of the rest the no
//     child.
// Pdfs are numbered in the order of the sets, each set's by pdf class: the first set's classes
// are pdfs 0, 1, ..., the next set's follow. A phone in no set may still reach the pdfs of a set
// the splits send it to, or none, as in Kaldi.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/context_dependency.h"

namespace gmmscore {

// `phone_sets`: each set sorted, with its phones once; no phone in two sets. `num_pdf_classes`:
// indexed by phone, the number of pdf classes of its topology entry (0 or absent: not a phone of
// the topology, an error where a set has it). A set whose phones have different numbers of pdf
// classes gets the largest, with Kaldi's warning appended to `warnings`.
absl::StatusOr<ContextDependency> MonophoneTree(const std::vector<std::vector<int32_t>>& phone_sets,
                                                const std::vector<int32_t>& num_pdf_classes,
                                                std::vector<std::string>* warnings);

}  // namespace gmmscore
