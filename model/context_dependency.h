// Kaldi's decision trees (src/tree/event-map.h, src/tree/context-dep.h): which pdf a phone's
// pdf class uses in a context of phones.
//
// An event is a list of (key, value) pairs, sorted by key, each key once. ContextDependency asks
// about the event
//   (-1, pdf class), (0, phone 0), ..., (N-1, phone N-1)
// where phones 0..N-1 are the window of N phones around the phone at the central position P (a
// triphone tree has N = 3, P = 1: left, centre, right), 0 standing for "no phone" where the
// window runs past the start or end of the utterance. A monophone tree has N = 1, P = 0.
//
// An EventMap maps an event to an answer, the pdf-id. Its nodes are Kaldi's three kinds:
//   constant (ConstantEventMap, "CE"): the answer, whatever the event.
//   table    (TableEventMap, "TE"): the event's value for `key` indexes the children; the child
//            at that value decides. A value outside the table, or a null entry (Kaldi's "NULL"),
//            has no answer.
//   split    (SplitEventMap, "SE"): the event's value for `key` goes to the "yes" child where it
//            is in the sorted `yes_set`, else to the "no" child.
// An event that lacks the key a table or a split asks about has no answer.
//
// The nodes are held in one array, node 0 the root, each child at a larger index than its parent
// and the child of no other node: a tree, walked without recursion however deep it is. Readers
// and builders give the nodes in pre-order (a node, then its children's subtrees in order), which
// is the order files list them in.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gmmscore {

// The key of the pdf class in an event (Kaldi's kPdfClass); keys 0..N-1 are window positions.
inline constexpr int32_t kPdfClassKey = -1;

// (key, value) pairs sorted by key, each key at most once.
using TreeEvent = std::vector<std::pair<int32_t, int32_t>>;
// An event to look up, wherever it is held (ContextDependency::Compute keeps a short one on the
// stack).
using TreeEventView = std::span<const std::pair<int32_t, int32_t>>;

class EventMap {
 public:
  enum class Kind : uint8_t { kConstant, kTable, kSplit };
  // A table entry without a map.
  static constexpr int32_t kNullChild = -1;

  struct Node {
    Kind kind = Kind::kConstant;
    int32_t key = 0;                // table, split: the key asked about
    int32_t answer = 0;             // constant
    std::vector<int32_t> children;  // table: a node (or kNullChild) per value; split: {yes, no}
    std::vector<int32_t> yes_set;   // split: sorted, each value once

    bool operator==(const Node&) const = default;
  };

  // Checks the shape above: at least one node; children in range, each with a larger index than
  // its parent and no other parent; every node but the root some node's child; a split has two
  // children (neither null) and a sorted yes-set of distinct values; only tables have null
  // entries. Errors name the node.
  static absl::StatusOr<EventMap> Create(std::vector<Node> nodes);

  const std::vector<Node>& nodes() const { return nodes_; }

  // Kaldi's EventMap::Map: the answer for an event, or nullopt where there is none.
  std::optional<int32_t> Map(TreeEventView event) const;
  // Kaldi's EventMap::MultiMap: every answer the event can reach when the keys it lacks may take
  // any value; sorted, each once.
  std::vector<int32_t> MultiMap(TreeEventView event) const;
  // The largest answer of any constant node (Kaldi's MaxResult), nullopt where there is none.
  std::optional<int32_t> MaxAnswer() const;

  bool operator==(const EventMap&) const = default;

 private:
  explicit EventMap(std::vector<Node> nodes) : nodes_(std::move(nodes)) {}
  std::vector<Node> nodes_;
};

class ContextDependency {
 public:
  // Errors unless 1 <= context_width and 0 <= central_position < context_width.
  static absl::StatusOr<ContextDependency> Create(int32_t context_width, int32_t central_position,
                                                  EventMap to_pdf);

  int32_t context_width() const { return context_width_; }        // N
  int32_t central_position() const { return central_position_; }  // P
  const EventMap& to_pdf() const { return to_pdf_; }

  // The pdf-id of pdf class `pdf_class` of the phone at the central position of `window` (N
  // phones, 0 for none), or nullopt where the tree has none (Kaldi's Compute returning false). A
  // window of another length, or with a negative phone, has none.
  std::optional<int32_t> Compute(std::span<const int32_t> window, int32_t pdf_class) const;
  // 1 + the largest answer (Kaldi's NumPdfs), 0 where there is no answer >= 0.
  int32_t NumPdfs() const;

  bool operator==(const ContextDependency&) const = default;

 private:
  ContextDependency(int32_t context_width, int32_t central_position, EventMap to_pdf)
      : context_width_(context_width),
        central_position_(central_position),
        to_pdf_(std::move(to_pdf)) {}

  int32_t context_width_;
  int32_t central_position_;
  EventMap to_pdf_;
};

}  // namespace gmmscore
