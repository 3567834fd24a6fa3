#include "model/monophone_tree.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// The monophone tree's central (and only) position.
constexpr int32_t kCentre = 0;

using Sets = std::vector<std::vector<int32_t>>;

class StubBuilder {
 public:
  StubBuilder(const std::vector<int32_t>& num_pdf_classes, std::vector<std::string>* warnings)
      : num_pdf_classes_(num_pdf_classes), warnings_(warnings) {}

  // Appends the map of sets [begin, end) in pre-order, numbering its pdfs from next_pdf_.
  void Append(const Sets& sets, size_t begin, size_t end) {
    if (end - begin == 1) {
      AppendPdfClassTable(NumClasses(sets[begin]));
      return;
    }
    size_t max_set_size = 0;
    int32_t highest_phone = 0;
    for (size_t i = begin; i < end; ++i) {
      max_set_size = std::max(max_set_size, sets[i].size());
      highest_phone = std::max(highest_phone, sets[i].back());
    }
    if (max_set_size == 1 && int64_t(end - begin) <= 2 * int64_t(highest_phone)) {
      AppendPhoneTable(sets, begin, end, highest_phone);
      return;
    }
    const size_t half = begin + (end - begin) / 2;
    const size_t split = nodes_.size();
    EventMap::Node node{.kind = EventMap::Kind::kSplit, .key = kCentre};
    for (size_t i = begin; i < half; ++i) {
      node.yes_set.insert(node.yes_set.end(), sets[i].begin(), sets[i].end());
    }
    std::sort(node.yes_set.begin(), node.yes_set.end());
    nodes_.push_back(std::move(node));
    const int32_t yes = int32_t(nodes_.size());
    Append(sets, begin, half);
    const int32_t no = int32_t(nodes_.size());
    Append(sets, half, end);
    nodes_[split].children = {yes, no};
  }

  std::vector<EventMap::Node> TakeNodes() { return std::move(nodes_); }

 private:
  int32_t NumClasses(const std::vector<int32_t>& set) {
    int32_t most = 0;
    for (size_t i = 0; i < set.size(); ++i) {
      const int32_t n = num_pdf_classes_[size_t(set[i])];
      if (i > 0 && n != most) {
        warnings_->push_back(absl::StrCat("Mismatching lengths within a phone set: ", n, " vs. ",
                                          most, " [unusual, but not necessarily fatal]."));
      }
      most = std::max(most, n);
    }
    return most;
  }

  // One set: a constant per pdf class.
  void AppendPdfClassTable(int32_t num_classes) {
    const size_t table = nodes_.size();
    nodes_.push_back({.kind = EventMap::Kind::kTable, .key = kPdfClassKey});
    std::vector<int32_t> children;
    for (int32_t c = 0; c < num_classes; ++c) {
      children.push_back(int32_t(nodes_.size()));
      nodes_.push_back({.kind = EventMap::Kind::kConstant, .answer = next_pdf_++});
    }
    nodes_[table].children = std::move(children);
  }

  // One-phone sets: a table on the phone. Pdfs go to the sets in their order, the entries
  // (children, in pre-order) in the order of the phones.
  void AppendPhoneTable(const Sets& sets, size_t begin, size_t end, int32_t highest_phone) {
    std::vector<std::pair<int32_t, int32_t>> phone_first_pdf;  // (phone, its first pdf)
    for (size_t i = begin; i < end; ++i) {
      phone_first_pdf.emplace_back(sets[i][0], next_pdf_);
      next_pdf_ += num_pdf_classes_[size_t(sets[i][0])];
    }
    const int32_t after = next_pdf_;
    std::sort(phone_first_pdf.begin(), phone_first_pdf.end());
    const size_t table = nodes_.size();
    nodes_.push_back({.kind = EventMap::Kind::kTable, .key = kCentre});
    std::vector<int32_t> children(size_t(highest_phone) + 1, EventMap::kNullChild);
    for (const auto& [phone, first_pdf] : phone_first_pdf) {
      children[size_t(phone)] = int32_t(nodes_.size());
      next_pdf_ = first_pdf;
      AppendPdfClassTable(num_pdf_classes_[size_t(phone)]);
    }
    nodes_[table].children = std::move(children);
    next_pdf_ = after;
  }

  const std::vector<int32_t>& num_pdf_classes_;
  std::vector<std::string>* warnings_;
  std::vector<EventMap::Node> nodes_;
  int32_t next_pdf_ = 0;
};

absl::Status CheckSets(const Sets& phone_sets, const std::vector<int32_t>& num_pdf_classes) {
  if (phone_sets.empty()) return absl::InvalidArgumentError("no phone sets");
  std::set<int32_t> seen;
  for (size_t i = 0; i < phone_sets.size(); ++i) {
    const std::vector<int32_t>& set = phone_sets[i];
    if (set.empty()) return absl::InvalidArgumentError(absl::StrCat("phone set ", i, " is empty"));
    for (size_t j = 0; j < set.size(); ++j) {
      const int32_t phone = set[j];
      if (j > 0 && phone <= set[j - 1]) {
        return absl::InvalidArgumentError(
            absl::StrCat("phone set ", i, " is not sorted with each phone once"));
      }
      if (phone <= 0 || size_t(phone) >= num_pdf_classes.size() ||
          num_pdf_classes[size_t(phone)] <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("phone ", phone, " of phone set ", i, " is not in the topology"));
      }
      if (!seen.insert(phone).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("phone ", phone, " is in more than one phone set"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ContextDependency> MonophoneTree(const Sets& phone_sets,
                                                const std::vector<int32_t>& num_pdf_classes,
                                                std::vector<std::string>* warnings) {
  GMM_RETURN_IF_ERROR(CheckSets(phone_sets, num_pdf_classes));
  StubBuilder builder(num_pdf_classes, warnings);
  builder.Append(phone_sets, 0, phone_sets.size());
  GMM_ASSIGN_OR_RETURN(EventMap map, EventMap::Create(builder.TakeNodes()));
  return ContextDependency::Create(1, kCentre, std::move(map));
}

}  // namespace gmmscore
