#include "formats/kaldi_fst.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "fst/openfst.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr int32_t kFstMagicNumber = 2125659606;  // the first four bytes of an OpenFst FST
constexpr int32_t kVectorFstVersion = 2;         // what VectorFst writes and reads
constexpr int32_t kMaxTypeNameLength = 256;
constexpr int64_t kMaxCount = std::numeric_limits<int32_t>::max();
constexpr uint64_t kArcBytes = 16;          // ilabel, olabel, weight, nextstate: 4 bytes each
constexpr char kStdArcType[] = "standard";  // OpenFst's name of its tropical arc, StdArc
constexpr int32_t kHasSymbolTables = 0x3;   // FstHeader's HAS_ISYMBOLS | HAS_OSYMBOLS

// Copies one binary vector FST off the stream, checking each count against the bytes that follow
// it: OpenFst reserves what the header and each state claim before reading them.
class BinaryFstCopier {
 public:
  BinaryFstCopier(std::istream& is, const std::string& name) : is_(is), name_(name) {}

  absl::StatusOr<std::string> Copy() {
    GMM_ASSIGN_OR_RETURN(const int32_t magic, Value<int32_t>("the header"));
    if (magic != kFstMagicNumber) return Error("not an OpenFst FST (bad magic number)");
    GMM_ASSIGN_OR_RETURN(const std::string fst_type, String());
    if (fst_type != "vector") {
      return Error(absl::StrCat("a '", fst_type, "' FST; Kaldi's graph tables hold vector FSTs"));
    }
    GMM_ASSIGN_OR_RETURN(const std::string arc_type, String());
    if (arc_type != kStdArcType) {
      return Error(
          absl::StrCat("arc type '", arc_type, "'; graphs have ", kStdArcType, " (tropical) arcs"));
    }
    GMM_ASSIGN_OR_RETURN(const int32_t version, Value<int32_t>("the header"));
    if (version != kVectorFstVersion) {
      return Error(absl::StrCat("vector FST version ", version, "; OpenFst writes version ",
                                kVectorFstVersion));
    }
    GMM_ASSIGN_OR_RETURN(const int32_t flags, Value<int32_t>("the header"));
    if (flags & kHasSymbolTables) {
      return Error("the FST has symbol tables; Kaldi's graphs have none");
    }
    GMM_RETURN_IF_ERROR(Value<uint64_t>("the header").status());  // properties
    GMM_ASSIGN_OR_RETURN(const int64_t start, Value<int64_t>("the header"));
    GMM_ASSIGN_OR_RETURN(const int64_t num_states, Value<int64_t>("the header"));
    GMM_RETURN_IF_ERROR(Value<int64_t>("the header").status());  // arcs (VectorFst writes 0)
    if (num_states < 0 || num_states > kMaxCount) {
      return Error(absl::StrCat("bad state count ", num_states, " in the header"));
    }
    if (start < -1 || start >= num_states) {
      return Error(absl::StrCat("start state ", start, " of ", num_states, " states"));
    }
    for (int64_t s = 0; s < num_states; ++s) {
      const std::string state = absl::StrCat("state ", s, " of ", num_states);
      GMM_RETURN_IF_ERROR(Take(sizeof(float), state));  // final weight
      GMM_ASSIGN_OR_RETURN(const int64_t num_arcs, Value<int64_t>(state));
      if (num_arcs < 0 || num_arcs > kMaxCount) {
        return Error(absl::StrCat(state, ": bad arc count ", num_arcs));
      }
      GMM_RETURN_IF_ERROR(Take(uint64_t(num_arcs) * kArcBytes, "the arcs of " + state));
    }
    return std::move(bytes_);
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(name_, ": byte ", bytes_.size(), " of the FST: ", what));
  }

  // Appends n bytes of the stream, as they arrive (never more than the stream holds).
  absl::Status Take(uint64_t n, absl::string_view what) {
    while (n > 0) {
      const size_t chunk = size_t(std::min<uint64_t>(n, 1 << 16));
      const size_t had = bytes_.size();
      bytes_.resize(had + chunk);
      is_.read(bytes_.data() + had, std::streamsize(chunk));
      const size_t got = size_t(is_.gcount());
      bytes_.resize(had + got);
      if (got != chunk) {
        is_.clear();
        return Error(absl::StrCat("the input ends inside ", what, " (a truncated FST)"));
      }
      n -= chunk;
    }
    return absl::OkStatus();
  }

  template <typename T>
  absl::StatusOr<T> Value(absl::string_view what) {
    GMM_RETURN_IF_ERROR(Take(sizeof(T), what));
    T value;
    std::memcpy(&value, bytes_.data() + bytes_.size() - sizeof(T), sizeof(T));
    return value;
  }

  // OpenFst's strings: an int32 length, then the characters.
  absl::StatusOr<std::string> String() {
    GMM_ASSIGN_OR_RETURN(const int32_t length, Value<int32_t>("the header"));
    if (length < 0 || length > kMaxTypeNameLength) {
      return Error(absl::StrCat("bad type name length ", length, " in the header"));
    }
    GMM_RETURN_IF_ERROR(Take(uint64_t(length), "the header"));
    return bytes_.substr(bytes_.size() - size_t(length));
  }

  std::istream& is_;
  const std::string& name_;
  std::string bytes_;
};

absl::StatusOr<VectorGraph> ReadBinaryFst(std::istream& is, const std::string& name) {
  GMM_ASSIGN_OR_RETURN(const std::string bytes, BinaryFstCopier(is, name).Copy());
  GMM_ASSIGN_OR_RETURN(const OpenFstFunctions* openfst, OpenFst());
  VectorGraph graph;
  std::string error;
  if (!openfst->read_vector_fst(bytes, name, &graph, &error)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", error));
  }
  return graph;
}

bool ParseWeight(absl::string_view word, float* weight) {
  if (word == "Infinity" || word == "-Infinity") {
    *weight = (word[0] == '-' ? -1.0f : 1.0f) * std::numeric_limits<float>::infinity();
    return true;
  }
  return absl::SimpleAtof(word, weight);
}

// Kaldi's text form: a newline after the key, then fstprint lines up to an empty line. The lines
// are read first, so that no state number may exceed the size of the text.
absl::StatusOr<VectorGraph> ReadTextFst(std::istream& is, const std::string& name) {
  while (std::isspace(is.peek()) && is.peek() != '\n') is.get();
  if (is.get() != '\n') {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": expected a newline before the text FST"));
  }
  std::vector<std::string> lines;
  int64_t bytes = 0;
  for (std::string line; std::getline(is, line) && !absl::StripAsciiWhitespace(line).empty();) {
    bytes += int64_t(line.size()) + 1;
    lines.push_back(std::move(line));
  }
  VectorGraph graph;
  auto state = [&](absl::string_view word, int32_t* s) {
    if (!absl::SimpleAtoi(word, s) || *s < 0 || *s > bytes) return false;
    while (*s >= graph.num_states()) graph.AddState();
    return true;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": line ", i + 1, " of the FST ('",
                                                     lines[i].substr(0, 80), "'): ", what));
    };
    const std::vector<absl::string_view> fields =
        absl::StrSplit(lines[i], absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
    if (fields.size() == 3 || fields.size() > 5) {
      return error("expected SRC DST ILABEL OLABEL [WEIGHT] or STATE [WEIGHT]");
    }
    int32_t source = 0;
    if (!state(fields[0], &source)) return error("bad state number");
    if (i == 0) graph.start = source;
    if (fields.size() <= 2) {
      float weight = 0.0f;
      if (fields.size() == 2 && !ParseWeight(fields[1], &weight)) return error("bad final weight");
      graph.final_cost[size_t(source)] = weight;
      continue;
    }
    GraphArc arc;
    if (!state(fields[1], &arc.next)) return error("bad destination state");
    if (!absl::SimpleAtoi(fields[2], &arc.ilabel) || !absl::SimpleAtoi(fields[3], &arc.olabel)) {
      return error("bad label");
    }
    // An arc of weight infinity (OpenFst's Zero) is no arc.
    if (fields.size() == 5 &&
        (!ParseWeight(fields[4], &arc.weight) || arc.weight == AlignGraph::kNotFinal)) {
      return error("bad arc weight");
    }
    graph.arcs[size_t(source)].push_back(arc);
  }
  return graph;
}

absl::Status CheckedAlignGraph(const VectorGraph& graph, AlignGraph* out) {
  int64_t num_arcs = 0;
  for (const std::vector<GraphArc>& arcs : graph.arcs) num_arcs += int64_t(arcs.size());
  if (num_arcs > kMaxCount) return absl::InvalidArgumentError("too many arcs");
  out->start = graph.start;
  out->final_cost = graph.final_cost;
  out->arc_begin.resize(size_t(graph.num_states()) + 1);
  out->arcs.clear();
  out->arcs.reserve(size_t(num_arcs));
  for (int32_t s = 0; s < graph.num_states(); ++s) {
    out->arc_begin[size_t(s)] = int32_t(out->arcs.size());
    out->arcs.insert(out->arcs.end(), graph.arcs[size_t(s)].begin(), graph.arcs[size_t(s)].end());
  }
  out->arc_begin[size_t(graph.num_states())] = int32_t(out->arcs.size());
  return ValidateAlignGraph(*out, std::numeric_limits<int32_t>::max());
}

// OpenFst's binary form of a graph: what a graph table holds after the key.
absl::StatusOr<std::string> BinaryFst(const VectorGraph& graph, const std::string& name) {
  GMM_ASSIGN_OR_RETURN(const OpenFstFunctions* openfst, OpenFst());
  std::string bytes, error;
  if (!openfst->write_vector_fst(graph, name, &bytes, &error)) {
    return absl::InternalError(absl::StrCat(name, ": ", error));
  }
  return bytes;
}

}  // namespace

absl::StatusOr<std::string> BinaryFst(const AlignGraph& graph, const std::string& name) {
  return BinaryFst(ToVectorGraph(graph), name);
}

absl::StatusOr<AlignGraph> ParseBinaryFst(std::string_view bytes, const std::string& name) {
  std::istringstream is{std::string(bytes)};
  GMM_ASSIGN_OR_RETURN(const VectorGraph read, ReadBinaryFst(is, name));
  AlignGraph graph;
  if (absl::Status s = CheckedAlignGraph(read, &graph); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", s.message()));
  }
  if (is.peek() != EOF) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": bytes follow the FST"));
  }
  return graph;
}

absl::StatusOr<std::unique_ptr<FstTableReader>> FstTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseRspecifier(rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<FstTableReader>(new FstTableReader(std::move(entries)));
}

absl::StatusOr<bool> FstTableReader::Next(std::string* key, AlignGraph* graph) {
  GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
  if (!more) return false;
  std::istream& is = entries_->object();
  const std::string& name = entries_->object_name();
  const int first = is.peek();
  if (first == EOF) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the input ends before the FST"));
  }
  GMM_ASSIGN_OR_RETURN(const VectorGraph read,
                       std::isspace(first) ? ReadTextFst(is, name) : ReadBinaryFst(is, name));
  if (absl::Status s = CheckedAlignGraph(read, graph); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", s.message()));
  }
  return true;
}

absl::StatusOr<std::unique_ptr<FstTableWriter>> FstTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<FstTableWriter>(new FstTableWriter(std::move(entries)));
}

absl::Status FstTableWriter::Write(const std::string& key, const AlignGraph& graph) {
  GMM_RETURN_IF_ERROR(ValidateAlignGraph(graph, std::numeric_limits<int32_t>::max()));
  std::string bytes;
  if (entries_->binary()) {
    GMM_ASSIGN_OR_RETURN(bytes, BinaryFst(ToVectorGraph(graph), key));
  }
  GMM_RETURN_IF_ERROR(entries_->Write(key, [&](std::ostream& os, bool binary) {
    if (binary) {
      os.write(bytes.data(), std::streamsize(bytes.size()));
      return;
    }
    // fstprint's form: arcs of each state, then its final weight; the start state first.
    auto weight = [&](float w) {
      if (w != 0.0f) os << '\t' << w;
    };
    os << '\n';
    std::vector<int32_t> order;
    if (graph.start >= 0) order.push_back(graph.start);
    for (int32_t s = 0; s < graph.num_states(); ++s) {
      if (s != graph.start) order.push_back(s);
    }
    for (const int32_t s : order) {
      for (int32_t a = graph.arc_begin[size_t(s)]; a < graph.arc_begin[size_t(s) + 1]; ++a) {
        const GraphArc& arc = graph.arcs[size_t(a)];
        os << s << '\t' << arc.next << '\t' << arc.ilabel << '\t' << arc.olabel;
        weight(arc.weight);
        os << '\n';
      }
      if (graph.final_cost[size_t(s)] != AlignGraph::kNotFinal) {
        os << s;
        weight(graph.final_cost[size_t(s)]);
        os << '\n';
      }
    }
    os << '\n';
  }));
  return absl::OkStatus();
}

}  // namespace gmmscore
