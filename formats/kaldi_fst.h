// Tables of Kaldi's compiled training graphs (compile-train-graphs' output, which
// gmm-align-compiled reads as "ark:graphs.fsts" or "ark:gunzip -c fsts.1.gz|"): OpenFst
// VectorFst<StdArc> objects, each converted to an AlignGraph (model/align_graph.h) with its states
// and each state's arcs in OpenFst's order, final_cost the final weight (AlignGraph::kNotFinal
// where a state is not final) and start the start state (-1 for none).
//
// An entry is read as Kaldi's VectorFstHolder reads it (fstext/kaldi-fst-io-inl.h):
//   binary  "KEY " and the FST in OpenFst's binary format (no "\0B"), read by OpenFst;
//   text    "KEY " and a newline, then fstprint lines ("SRC DST ILABEL OLABEL [WEIGHT]",
//           "STATE [WEIGHT]", fields separated by tabs or spaces) up to an empty line; the start
//           is the first line's source state.
// Every table form of formats/table_entries.h is read: files, "-", pipes, scripts with offsets.
//
// Errors name the input and the key. A truncated or corrupt FST is an error, never an allocation
// the input cannot back: counts are checked against the bytes that follow them before OpenFst
// sees the FST (binary), and state numbers against the size of the text (text). The graphs are
// checked with ValidateAlignGraph (destinations and start in range, no NaN weights, input labels
// not negative).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "formats/table_entries.h"
#include "model/align_graph.h"

namespace gmmscore {

// One FST in OpenFst's binary format (what a graphs archive holds after each key), as the Align
// RPC receives it; errors are prefixed with `name`.
absl::StatusOr<AlignGraph> ParseBinaryFst(std::string_view bytes, const std::string& name);
// The graph in OpenFst's binary format, as ParseBinaryFst reads it back.
absl::StatusOr<std::string> BinaryFst(const AlignGraph& graph, const std::string& name);

// Writes AlignGraphs as Kaldi's VectorFstHolder writes VectorFst<StdArc>s (what
// compile-train-graphs writes): binary, "KEY " and OpenFst's binary FST; text (",t"), "KEY ", a
// newline, fstprint's lines (tabs; a weight of 0 left out) and an empty line.
class FstTableWriter {
 public:
  static absl::StatusOr<std::unique_ptr<FstTableWriter>> Open(const std::string& wspecifier);
  absl::Status Write(const std::string& key, const AlignGraph& graph);
  absl::Status Close() { return entries_->Close(); }

 private:
  explicit FstTableWriter(std::unique_ptr<TableEntryWriter> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryWriter> entries_;
};

class FstTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<FstTableReader>> Open(const std::string& rspecifier);

  // Reads the next entry; returns false at the end of the table.
  absl::StatusOr<bool> Next(std::string* key, AlignGraph* graph);

 private:
  explicit FstTableReader(std::unique_ptr<TableEntryReader> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryReader> entries_;
};

}  // namespace gmmscore
