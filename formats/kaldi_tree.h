// Kaldi's tree files (exp/*/tree): a ContextDependency (model/context_dependency.h) as Kaldi's
// ContextDependency::Write and EventMap::Write write it (src/tree/context-dep.cc,
// src/tree/event-map.cc), binary or text:
//
//   tree  := ContextDependency N P ToPdf MAP EndContextDependency
//   MAP   := CE answer
//          | TE key size ( MAP-or-NULL * size )     (size: a uint32; NULL: an empty entry)
//          | SE key [ yes-set ] { MAP MAP }         (yes child, then no child)
//
// Tokens are written followed by a space; in text, ")" and "}" are followed by a newline too and
// the yes-set is an integer vector ("[ 1 2 ]\n"). Older trees put "ToLength MAP" before ToPdf;
// that map is read and dropped, as Kaldi does.
//
// Hostile input: every count is checked against the bytes the file has left before anything is
// sized by it; maps nest as deep as the file likes, read without recursion; a NULL where a map
// must be (the root, a split's child) and any other token are errors naming the file and byte.
#pragma once

#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "formats/kaldi_io.h"
#include "model/context_dependency.h"

namespace gmmscore {

absl::StatusOr<ContextDependency> ReadKaldiTree(KaldiReader& in);
void WriteKaldiTree(const ContextDependency& tree, std::ostream& os, bool binary);

// Whole tree files through Kaldi's extended filenames (formats/kaldi_stream.h), binary (with
// Kaldi's "\0B" marker) or text.
absl::StatusOr<ContextDependency> ReadKaldiTreeFile(const std::string& rxfilename);
absl::Status WriteKaldiTreeFile(const ContextDependency& tree, const std::string& wxfilename,
                                bool binary);

}  // namespace gmmscore
