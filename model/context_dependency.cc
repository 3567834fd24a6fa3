#include "model/context_dependency.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

// The event's value for `key` (Kaldi's EventMap::Lookup on a sorted event).
std::optional<int32_t> Lookup(TreeEventView event, int32_t key) {
  const auto it = std::lower_bound(event.begin(), event.end(), key,
                                   [](const auto& pair, int32_t k) { return pair.first < k; });
  if (it == event.end() || it->first != key) return std::nullopt;
  return it->second;
}

bool InYesSet(const EventMap::Node& split, int32_t value) {
  return std::binary_search(split.yes_set.begin(), split.yes_set.end(), value);
}

// The child a table's entry for `value` leads to, kNullChild where there is none.
int32_t TableChild(const EventMap::Node& table, int32_t value) {
  if (value < 0 || size_t(value) >= table.children.size()) return EventMap::kNullChild;
  return table.children[size_t(value)];
}

}  // namespace

absl::StatusOr<EventMap> EventMap::Create(std::vector<Node> nodes) {
  if (nodes.empty()) return absl::InvalidArgumentError("an event map needs at least one node");
  const size_t n = nodes.size();
  std::vector<bool> has_parent(n, false);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = nodes[i];
    const std::string where = absl::StrCat("event map node ", i, ": ");
    if (node.kind == Kind::kConstant) {
      if (!node.children.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(where, "a constant has no children"));
      }
      // So that NumPdfs, 1 + the largest answer, is an int32.
      if (node.answer == std::numeric_limits<int32_t>::max()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "answer ", node.answer, " is out of range"));
      }
    }
    if (node.kind == Kind::kSplit) {
      if (node.children.size() != 2) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "a split has two children, not ", node.children.size()));
      }
      if (std::adjacent_find(node.yes_set.begin(), node.yes_set.end(),
                             [](int32_t a, int32_t b) { return a >= b; }) != node.yes_set.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "the yes-set of a split must be sorted, each value once"));
      }
    } else if (!node.yes_set.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, "only a split has a yes-set"));
    }
    for (const int32_t child : node.children) {
      if (child == kNullChild && node.kind == Kind::kTable) continue;
      if (child <= int64_t(i) || size_t(child) >= n) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "child ", child, " is not a node after this one (", n, " nodes)"));
      }
      if (has_parent[size_t(child)]) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, "node ", child, " is already another node's child"));
      }
      has_parent[size_t(child)] = true;
    }
  }
  for (size_t i = 1; i < n; ++i) {
    if (!has_parent[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("event map node ", i, " is not the root and nobody's child"));
    }
  }
  return EventMap(std::move(nodes));
}

std::optional<int32_t> EventMap::Map(TreeEventView event) const {
  // Children have larger indices than their parents, so the walk ends.
  int32_t id = 0;
  while (true) {
    const Node& node = nodes_[size_t(id)];
    if (node.kind == Kind::kConstant) return node.answer;
    const std::optional<int32_t> value = Lookup(event, node.key);
    if (!value.has_value()) return std::nullopt;
    if (node.kind == Kind::kTable) {
      id = TableChild(node, *value);
      if (id == kNullChild) return std::nullopt;
    } else {
      id = node.children[InYesSet(node, *value) ? 0 : 1];
    }
  }
}

std::vector<int32_t> EventMap::MultiMap(TreeEventView event) const {
  std::vector<int32_t> answers;
  std::vector<int32_t> pending = {0};
  while (!pending.empty()) {
    const Node& node = nodes_[size_t(pending.back())];
    pending.pop_back();
    if (node.kind == Kind::kConstant) {
      answers.push_back(node.answer);
      continue;
    }
    const std::optional<int32_t> value = Lookup(event, node.key);
    if (!value.has_value()) {  // any value: every child
      for (const int32_t child : node.children) {
        if (child != kNullChild) pending.push_back(child);
      }
    } else if (node.kind == Kind::kTable) {
      if (const int32_t child = TableChild(node, *value); child != kNullChild) {
        pending.push_back(child);
      }
    } else {
      pending.push_back(node.children[InYesSet(node, *value) ? 0 : 1]);
    }
  }
  std::sort(answers.begin(), answers.end());
  answers.erase(std::unique(answers.begin(), answers.end()), answers.end());
  return answers;
}

std::optional<int32_t> EventMap::MaxAnswer() const {
  std::optional<int32_t> max;
  for (const Node& node : nodes_) {
    if (node.kind == Kind::kConstant && (!max.has_value() || node.answer > *max)) {
      max = node.answer;
    }
  }
  return max;
}

absl::StatusOr<ContextDependency> ContextDependency::Create(int32_t context_width,
                                                            int32_t central_position,
                                                            EventMap to_pdf) {
  if (context_width < 1 || central_position < 0 || central_position >= context_width) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a tree's context width N must be >= 1 and its central position P in [0, N); N = ",
        context_width, ", P = ", central_position));
  }
  return ContextDependency(context_width, central_position, std::move(to_pdf));
}

std::optional<int32_t> ContextDependency::Compute(std::span<const int32_t> window,
                                                  int32_t pdf_class) const {
  if (window.size() != size_t(context_width_)) return std::nullopt;
  // The event on the stack for the windows trees have (triphones, quinphones): a graph compiler
  // asks for every context it meets, so no allocation per call.
  constexpr size_t kOnStack = 8;
  std::array<std::pair<int32_t, int32_t>, kOnStack> small;
  TreeEvent large;
  std::span<std::pair<int32_t, int32_t>> event;
  if (window.size() + 1 <= kOnStack) {
    event = std::span(small).first(window.size() + 1);
  } else {
    large.resize(window.size() + 1);
    event = large;
  }
  event[0] = {kPdfClassKey, pdf_class};
  for (size_t i = 0; i < window.size(); ++i) {
    if (window[i] < 0) return std::nullopt;
    event[i + 1] = {int32_t(i), window[i]};
  }
  return to_pdf_.Map(event);
}

int32_t ContextDependency::NumPdfs() const {
  const std::optional<int32_t> max = to_pdf_.MaxAnswer();
  return max.has_value() && *max >= 0 ? *max + 1 : 0;
}

}  // namespace gmmscore
