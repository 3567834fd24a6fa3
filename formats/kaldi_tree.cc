#include "formats/kaldi_tree.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "formats/kaldi_stream.h"
#include "formats/read_limits.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

using Node = EventMap::Node;
using Kind = EventMap::Kind;

// A table is indexed by a phone or a pdf class.
constexpr uint64_t kMaxTableEntries = uint64_t(kMaxPhoneId) + 1;
// Nodes of one map: far beyond any real tree (tens of thousands at most).
constexpr size_t kMaxNodes = size_t{1} << 22;
// The fewest bytes a table entry takes: "NULL " (a constant is "CE 0 " or more).
constexpr uint64_t kMinEntryBytes = 5;
// Kaldi's size byte of an unsigned 4-byte integer (the size of a signed type, negated).
constexpr char kUint32SizeByte = -4;

// Kaldi's ReadBasicType<uint32>: a table's size.
absl::StatusOr<uint32_t> ReadUint32(KaldiReader& in) {
  if (!in.binary()) {
    GMM_ASSIGN_OR_RETURN(std::string word, in.Token());
    uint32_t value = 0;
    if (!absl::SimpleAtoi(word, &value)) {
      return in.Error(absl::StrCat("expected a table size (an unsigned 32-bit integer), found ",
                                   word.substr(0, 40)));
    }
    return value;
  }
  std::istream& is = in.stream();
  const int size_byte = is.get();
  uint32_t value = 0;
  if (size_byte != EOF) is.read(reinterpret_cast<char*>(&value), sizeof(value));
  if (size_byte == EOF || is.gcount() != sizeof(value)) {
    is.clear();
    return in.Error("file ends inside a table size");
  }
  if (static_cast<char>(size_byte) != kUint32SizeByte) {
    return in.Error(
        absl::StrCat("expected an unsigned 4-byte integer (a table size), size byte is ",
                     int(static_cast<char>(size_byte))));
  }
  return value;
}

// The head of a constant, table or split whose token has been read: its fields, and for a table
// or split its opening bracket; the number of children that follow goes to *num_children.
absl::StatusOr<Node> ReadNodeHead(KaldiReader& in, const std::string& token, int64_t start,
                                  size_t* num_children) {
  Node node;
  *num_children = 0;
  if (token == "CE") {
    node.kind = Kind::kConstant;
    GMM_ASSIGN_OR_RETURN(node.answer, in.Int32());
    return node;
  }
  if (token == "TE") {
    node.kind = Kind::kTable;
    GMM_ASSIGN_OR_RETURN(node.key, in.Int32());
    GMM_ASSIGN_OR_RETURN(const uint32_t size, ReadUint32(in));
    GMM_RETURN_IF_ERROR(in.CheckRoom(size, kMinEntryBytes, kMaxTableEntries, "table entries"));
    *num_children = size;
    GMM_RETURN_IF_ERROR(in.Expect("("));
    return node;
  }
  if (token == "SE") {
    node.kind = Kind::kSplit;
    GMM_ASSIGN_OR_RETURN(node.key, in.Int32());
    GMM_ASSIGN_OR_RETURN(node.yes_set, in.Int32Vector());
    if (std::adjacent_find(node.yes_set.begin(), node.yes_set.end(),
                           [](int32_t a, int32_t b) { return a >= b; }) != node.yes_set.end()) {
      return in.Error("the yes-set of a split is not sorted with each value once");
    }
    *num_children = 2;
    GMM_RETURN_IF_ERROR(in.Expect("{"));
    return node;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(in.name(), ": byte ", start,
                   ": expected an event map (CE, TE, SE or NULL), found ", token.substr(0, 40)));
}

// One map (Kaldi's EventMap::Read), its nodes in the order the file lists them (pre-order). The
// tables and splits whose children are still being read are kept on a stack of our own, not the
// call stack, so that no nesting exhausts it; their children grow as they are read, so that sizes
// that lie (from a pipe, whose bytes left are unknown) cost no more than the data read.
absl::StatusOr<EventMap> ReadEventMap(KaldiReader& in) {
  std::vector<Node> nodes;
  std::vector<std::pair<size_t, size_t>> open;  // (node, children it has in all)
  do {
    const int64_t start = in.offset();
    GMM_ASSIGN_OR_RETURN(std::string token, in.Token());
    int32_t id = EventMap::kNullChild;
    size_t num_children = 0;
    if (token == "NULL") {
      if (open.empty() || nodes[open.back().first].kind != Kind::kTable) {
        return absl::InvalidArgumentError(
            absl::StrCat(in.name(), ": byte ", start,
                         ": NULL where a map must be (only a table's entries may be empty)"));
      }
    } else {
      if (nodes.size() == kMaxNodes) {
        return in.Error(absl::StrCat("more than ", kMaxNodes, " event map nodes"));
      }
      GMM_ASSIGN_OR_RETURN(Node node, ReadNodeHead(in, token, start, &num_children));
      id = int32_t(nodes.size());
      nodes.push_back(std::move(node));
    }
    if (!open.empty()) nodes[open.back().first].children.push_back(id);
    if (id != EventMap::kNullChild && nodes[size_t(id)].kind != Kind::kConstant) {
      open.emplace_back(size_t(id), num_children);
    }
    while (!open.empty() && nodes[open.back().first].children.size() == open.back().second) {
      GMM_RETURN_IF_ERROR(in.Expect(nodes[open.back().first].kind == Kind::kTable ? ")" : "}"));
      open.pop_back();
    }
  } while (!open.empty());
  auto map = EventMap::Create(std::move(nodes));
  if (!map.ok()) return in.Error(map.status().message());
  return map;
}

absl::StatusOr<ContextDependency> ReadTree(KaldiReader& in) {
  GMM_RETURN_IF_ERROR(in.Expect("ContextDependency"));
  GMM_ASSIGN_OR_RETURN(const int32_t context_width, in.Int32());
  GMM_ASSIGN_OR_RETURN(const int32_t central_position, in.Int32());
  GMM_ASSIGN_OR_RETURN(std::string token, in.Token());
  if (token == "ToLength") {  // older trees: a map to each phone's number of pdf classes, unused
    GMM_RETURN_IF_ERROR(ReadEventMap(in).status());
    GMM_ASSIGN_OR_RETURN(token, in.Token());
  }
  if (token != "ToPdf") {
    return in.Error(absl::StrCat("expected ToPdf, found ", token.substr(0, 40)));
  }
  GMM_ASSIGN_OR_RETURN(EventMap to_pdf, ReadEventMap(in));
  GMM_RETURN_IF_ERROR(in.Expect("EndContextDependency"));
  auto tree = ContextDependency::Create(context_width, central_position, std::move(to_pdf));
  if (!tree.ok()) return in.Error(tree.status().message());
  return tree;
}

void WriteUint32(std::ostream& os, bool binary, uint32_t value) {
  if (binary) {
    os.put(kUint32SizeByte);
    os.write(reinterpret_cast<const char*>(&value), sizeof(value));
  } else {
    os << value << ' ';
  }
}

// Kaldi's EventMap::Write, its recursion replaced by a stack of our own as in the reader.
void WriteEventMap(const EventMap& map, std::ostream& os, bool binary) {
  KaldiWriter out(os, binary);
  const std::vector<Node>& nodes = map.nodes();
  std::vector<std::pair<size_t, size_t>> open;  // (node, children written)
  auto write_head = [&](size_t id) {
    const Node& node = nodes[id];
    switch (node.kind) {
      case Kind::kConstant:
        out.Token("CE");
        out.Int32(node.answer);
        return;
      case Kind::kTable:
        out.Token("TE");
        out.Int32(node.key);
        WriteUint32(os, binary, uint32_t(node.children.size()));
        out.Token("(");
        break;
      case Kind::kSplit:
        out.Token("SE");
        out.Int32(node.key);
        out.Int32Vector(node.yes_set);
        out.Token("{");
        break;
    }
    open.emplace_back(id, 0);
  };
  write_head(0);
  while (!open.empty()) {
    const size_t id = open.back().first;
    const size_t next = open.back().second++;
    if (next == nodes[id].children.size()) {
      out.Token(nodes[id].kind == Kind::kTable ? ")" : "}");
      out.Newline();
      open.pop_back();
      continue;
    }
    const int32_t child = nodes[id].children[next];
    if (child == EventMap::kNullChild) {
      out.Token("NULL");
    } else {
      write_head(size_t(child));
    }
  }
}

}  // namespace

absl::StatusOr<ContextDependency> ReadKaldiTree(KaldiReader& in) {
  return CatchAllocation(in.name(), [&] { return ReadTree(in); });
}

void WriteKaldiTree(const ContextDependency& tree, std::ostream& os, bool binary) {
  KaldiWriter out(os, binary);
  out.Token("ContextDependency");
  out.Int32(tree.context_width());
  out.Int32(tree.central_position());
  out.Token("ToPdf");
  WriteEventMap(tree.to_pdf(), os, binary);
  out.Token("EndContextDependency");
}

absl::StatusOr<ContextDependency> ReadKaldiTreeFile(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  std::istream& is = input->stream();
  KaldiReader in(is, input->name(), KaldiReader::ConsumeBinaryMarker(is));
  GMM_ASSIGN_OR_RETURN(ContextDependency tree, ReadKaldiTree(in));
  GMM_RETURN_IF_ERROR(input->Close());
  return tree;
}

absl::Status WriteKaldiTreeFile(const ContextDependency& tree, const std::string& wxfilename,
                                bool binary) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> output, OutputStream::Open(wxfilename));
  KaldiWriter(output->stream(), binary).BinaryMarker();
  WriteKaldiTree(tree, output->stream(), binary);
  if (!output->stream()) return absl::DataLossError(absl::StrCat(output->name(), ": write failed"));
  return output->Close();
}

}  // namespace gmmscore
