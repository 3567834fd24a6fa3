// compile-train-graphs' archive (graphs.fsts) read as AlignGraphs: keys, one graph against its
// fstprint, the text form, pipes and scripts, and truncated or corrupt FSTs as clear errors.
#include "formats/kaldi_fst.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

using testing::DataPath;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

const std::vector<std::string> kKeys = {"cards-001",     "cards-003",       "lib-0880",
                                        "raw-goforward", "sp0.9-cards-002", "sp1.1-lib-0920"};
const std::string kMagic("\xd6\xfd\xb2\x7e", 4);  // OpenFst's magic number, little-endian

std::string Graphs() { return DataPath("kaldi-mono/graphs.fsts"); }

struct Table {
  std::vector<std::string> keys;
  std::map<std::string, AlignGraph> graphs;
};

absl::StatusOr<Table> ReadGraphs(const std::string& rspecifier) {
  Table table;
  auto reader = FstTableReader::Open(rspecifier);
  if (!reader.ok()) return reader.status();
  std::string key;
  AlignGraph graph;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(&key, &graph);
    if (!more.ok()) return more.status();
    if (!*more) return table;
    table.keys.push_back(key);
    table.graphs[key] = graph;
  }
}

// Where each entry's FST starts in graphs.fsts.
std::map<std::string, size_t> Offsets(const std::string& archive) {
  std::map<std::string, size_t> offsets;
  for (const std::string& key : kKeys) {
    const size_t at = archive.find(key + " " + kMagic);
    EXPECT_NE(at, std::string::npos) << key;
    offsets[key] = at + key.size() + 1;
  }
  return offsets;
}

void ExpectSameGraph(const AlignGraph& a, const AlignGraph& b) {
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.final_cost, b.final_cost);
  EXPECT_EQ(a.arc_begin, b.arc_begin);
  ASSERT_EQ(a.arcs.size(), b.arcs.size());
  for (size_t i = 0; i < a.arcs.size(); ++i) {
    EXPECT_EQ(a.arcs[i].ilabel, b.arcs[i].ilabel) << i;
    EXPECT_EQ(a.arcs[i].olabel, b.arcs[i].olabel) << i;
    EXPECT_EQ(a.arcs[i].weight, b.arcs[i].weight) << i;
    EXPECT_EQ(a.arcs[i].next, b.arcs[i].next) << i;
  }
}

TEST(FstTable, ReadsKaldisGraphArchive) {
  const auto table = ReadGraphs("ark:" + Graphs());
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->keys, kKeys);
  for (const auto& [key, graph] : table->graphs) {
    EXPECT_TRUE(ValidateAlignGraph(graph, 120).ok()) << key;  // the model's 120 transition-ids
    EXPECT_EQ(graph.start, 0) << key;
  }
}

TEST(FstTable, GraphMatchesItsFstprint) {
  const auto table = ReadGraphs("ark:" + Graphs());
  ASSERT_TRUE(table.ok()) << table.status();
  const AlignGraph& graph = table->graphs.at("cards-001");
  // fstprint: "SRC DST ILABEL OLABEL [WEIGHT]" per arc, in OpenFst's order; "STATE [WEIGHT]".
  std::map<int32_t, std::vector<GraphArc>> arcs;
  std::map<int32_t, float> finals;
  const std::string printed = ReadFile(DataPath("kaldi-mono/graph-cards-001.txt"));
  for (const absl::string_view line : absl::StrSplit(printed, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> f = absl::StrSplit(line, '\t');
    std::vector<float> v(f.size(), 0.0f);
    for (size_t i = 0; i < f.size(); ++i) ASSERT_TRUE(absl::SimpleAtof(f[i], &v[i])) << line;
    if (f.size() <= 2) {
      finals[int32_t(v[0])] = f.size() == 2 ? v[1] : 0.0f;
    } else {
      arcs[int32_t(v[0])].push_back(
          {int32_t(v[2]), int32_t(v[3]), f.size() == 5 ? v[4] : 0.0f, int32_t(v[1])});
    }
  }
  EXPECT_EQ(graph.num_states(), 99);
  EXPECT_EQ(graph.num_arcs(), 215);
  EXPECT_EQ(finals.size(), 2u);
  for (int32_t s = 0; s < graph.num_states(); ++s) {
    const std::vector<GraphArc>& expected = arcs[s];
    ASSERT_EQ(graph.arc_begin[s + 1] - graph.arc_begin[s], int32_t(expected.size())) << s;
    for (size_t a = 0; a < expected.size(); ++a) {
      const GraphArc& got = graph.arcs[size_t(graph.arc_begin[s]) + a];
      EXPECT_EQ(got.ilabel, expected[a].ilabel) << s << " " << a;
      EXPECT_EQ(got.olabel, expected[a].olabel) << s << " " << a;
      EXPECT_EQ(got.weight, expected[a].weight) << s << " " << a;
      EXPECT_EQ(got.next, expected[a].next) << s << " " << a;
    }
    const auto final = finals.find(s);
    EXPECT_EQ(graph.final_cost[s], final == finals.end() ? AlignGraph::kNotFinal : final->second)
        << s;
  }
}

TEST(FstTable, ReadsKaldisTextForm) {
  // What Kaldi writes for "ark,t:": the key, a newline, fstprint's lines, an empty line.
  TempDir dir;
  const std::string printed = ReadFile(DataPath("kaldi-mono/graph-cards-001.txt"));
  WriteFile(dir.file("g.txt"), "cards-001 \n" + printed + "\nempty \n\nlast\n0\t1\t5\t0\n1\n");
  const auto text = ReadGraphs("ark:" + dir.file("g.txt"));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->keys, (std::vector<std::string>{"cards-001", "empty", "last"}));
  const auto binary = ReadGraphs("ark:" + Graphs());
  ASSERT_TRUE(binary.ok());
  ExpectSameGraph(text->graphs.at("cards-001"), binary->graphs.at("cards-001"));
  EXPECT_EQ(text->graphs.at("empty").start, -1);
  EXPECT_EQ(text->graphs.at("empty").num_states(), 0);
  const AlignGraph& last = text->graphs.at("last");
  EXPECT_EQ(last.num_states(), 2);
  EXPECT_EQ(last.final_cost, (std::vector<float>{AlignGraph::kNotFinal, 0.0f}));

  WriteFile(dir.file("bad.txt"), "utt \n0\t1\t5\n");
  const std::string message(ReadGraphs("ark:" + dir.file("bad.txt")).status().message());
  EXPECT_EQ(message, dir.file("bad.txt") +
                         " (key utt): line 1 of the FST ('0\t1\t5'): expected SRC DST ILABEL "
                         "OLABEL [WEIGHT] or STATE [WEIGHT]");
  WriteFile(dir.file("far.txt"), "utt \n0\t2000000000\t5\t0\n");
  EXPECT_NE(ReadGraphs("ark:" + dir.file("far.txt")).status().message().find("bad destination"),
            std::string::npos);
}

TEST(FstTable, ReadsPipesAndScriptsWithOffsets) {
  const auto direct = ReadGraphs("ark:" + Graphs());
  ASSERT_TRUE(direct.ok());
  const auto piped = ReadGraphs("ark,s,cs:cat " + Graphs() + " |");
  ASSERT_TRUE(piped.ok()) << piped.status();
  EXPECT_EQ(piped->keys, kKeys);
  for (const std::string& key : kKeys)
    ExpectSameGraph(piped->graphs.at(key), direct->graphs.at(key));

  TempDir dir;
  const std::string archive = ReadFile(Graphs());
  const auto offsets = Offsets(archive);
  // One FST on its own, as WriteFstKaldi writes a file, and the rest by offset.
  const size_t begin = offsets.at("cards-003"), end = archive.find("lib-0880 " + kMagic);
  WriteFile(dir.file("one.fst"), archive.substr(begin, end - begin));
  std::string script;
  for (const std::string& key : kKeys) {
    script += key + " " +
              (key == "cards-003" ? dir.file("one.fst")
                                  : Graphs() + ":" + std::to_string(offsets.at(key))) +
              "\n";
  }
  WriteFile(dir.file("graphs.scp"), script);
  const auto scripted = ReadGraphs("scp:" + dir.file("graphs.scp"));
  ASSERT_TRUE(scripted.ok()) << scripted.status();
  EXPECT_EQ(scripted->keys, kKeys);
  for (const std::string& key : kKeys)
    ExpectSameGraph(scripted->graphs.at(key), direct->graphs.at(key));

  const absl::Status failed = ReadGraphs("ark:cat " + Graphs() + "; exit 1 |").status();
  EXPECT_NE(failed.message().find("command 'cat " + Graphs() + "; exit 1' exited with status 1"),
            std::string::npos)
      << failed;
}

// Sets the int64 at byte `at` of cards-001's FST and reads an archive of that entry alone.
absl::Status ReadWithInt64(int64_t value, size_t at) {
  std::string archive = ReadFile(Graphs());
  archive.resize(archive.find("cards-003 " + kMagic));
  std::memcpy(archive.data() + 10 + at, &value, 8);  // after "cards-001 "
  TempDir dir;
  WriteFile(dir.file("g.fsts"), archive);
  return ReadGraphs("ark:" + dir.file("g.fsts")).status();
}

TEST(FstTable, CorruptCountsAreErrorsNotAllocations) {
  // The header: magic, "vector", "standard", version, flags, properties, then the start (byte
  // 42), the state count (50) and the arc count; state 0's final weight and arc count (70).
  absl::Status s = ReadWithInt64(int64_t(1) << 40, 42);
  EXPECT_NE(s.message().find("(key cards-001): byte 66 of the FST: start state 1099511627776 of "
                             "99 states"),
            std::string::npos)
      << s;
  s = ReadWithInt64(int64_t(1) << 40, 50);
  EXPECT_NE(s.message().find("bad state count 1099511627776"), std::string::npos) << s;
  s = ReadWithInt64((int64_t(1) << 31) - 1, 50);  // a count that fits, with nothing behind it
  EXPECT_NE(s.message().find("the input ends inside state 99 of 2147483647 (a truncated FST)"),
            std::string::npos)
      << s;
  s = ReadWithInt64(int64_t(1) << 40, 70);
  EXPECT_NE(s.message().find("state 0 of 99: bad arc count 1099511627776"), std::string::npos) << s;
  s = ReadWithInt64((int64_t(1) << 31) - 1, 70);
  EXPECT_NE(s.message().find("the input ends inside the arcs of state 0 of 99 (a truncated FST)"),
            std::string::npos)
      << s;
}

TEST(FstTable, TruncatedOrCorruptFstsAreClearErrors) {
  const std::string archive = ReadFile(Graphs());
  const size_t end = archive.find("cards-003 " + kMagic);
  TempDir dir;
  for (size_t cut = 10; cut < end; cut += cut < 100 ? 1 : 37) {
    WriteFile(dir.file("cut.fsts"), archive.substr(0, cut));
    const absl::Status s = ReadGraphs("ark:" + dir.file("cut.fsts")).status();
    ASSERT_FALSE(s.ok()) << cut;
    EXPECT_NE(s.message().find("cut.fsts (key cards-001): "), std::string::npos) << s;
  }
  // Any byte of the first FST set to 0xff: an error or a graph that passes the checks, never a
  // crash.
  for (size_t at = 10; at < end; at += 3) {
    std::string corrupt = archive;
    corrupt[at] = '\xff';
    WriteFile(dir.file("bad.fsts"), corrupt);
    const absl::Status s = ReadGraphs("ark:" + dir.file("bad.fsts")).status();
    if (!s.ok()) {
      EXPECT_NE(s.message().find("bad.fsts (key "), std::string::npos) << s;
    }
  }
  std::string other_type = archive;
  other_type.replace(18, 6, "const ");
  WriteFile(dir.file("const.fsts"), other_type);
  EXPECT_NE(ReadGraphs("ark:" + dir.file("const.fsts"))
                .status()
                .message()
                .find("a 'const ' FST; Kaldi's graph tables hold vector FSTs"),
            std::string::npos);
}

}  // namespace
}  // namespace gmmscore
