// Training graphs compiled as Kaldi's compile-train-graphs compiles them, checked against the
// graphs real Kaldi compiled for the same words: the same states and arcs, in the same order, up
// to the numbering of states. Monophone (tests/data/kaldi-mono: its L.fst and final.mdl) through
// the library, triphone (tests/data/kaldi-tri-graphs: the tri1 tree, position-dependent phones,
// disambiguation symbols) through compile-train-graphs under its Kaldi name.
#include "align/training_graph_compiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <queue>
#include <sstream>
#include <string>
#include <vector>

#include "formats/kaldi_fst.h"
#include "formats/kaldi_model.h"
#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

// A monophone tree as the model's transition-states spell it: the pdf of (phone, pdf-class).
PhoneContext MonophoneContext(const TransitionModel& model) {
  std::map<std::pair<int32_t, int32_t>, int32_t> pdfs;
  for (const TransitionTuple& t : model.tuples()) {
    const HmmState& state = model.topology().TopologyForPhone(t.phone)[t.hmm_state];
    pdfs[{t.phone, state.forward_pdf_class}] = t.forward_pdf;
    pdfs[{t.phone, state.self_loop_pdf_class}] = t.self_loop_pdf;
  }
  return PhoneContext{
      1, 0, [pdfs](std::span<const int32_t> window, int32_t pdf_class) -> std::optional<int32_t> {
        auto it = pdfs.find({window[0], pdf_class});
        if (it == pdfs.end()) return std::nullopt;
        return it->second;
      }};
}

// Whether two graphs are the same up to the numbering of states, each state's arcs in the same
// order (Kaldi's equal alignment draws arcs by position); `why` says where they differ.
bool SameUpToNumbering(const AlignGraph& a, const AlignGraph& b, std::string* why) {
  if (a.num_states() != b.num_states() || a.num_arcs() != b.num_arcs()) {
    *why = "sizes " + std::to_string(a.num_states()) + "/" + std::to_string(a.num_arcs()) + " vs " +
           std::to_string(b.num_states()) + "/" + std::to_string(b.num_arcs());
    return false;
  }
  std::vector<int32_t> map(a.num_states(), -1);
  std::queue<int32_t> pending;
  map[a.start] = b.start;
  pending.push(a.start);
  while (!pending.empty()) {
    const int32_t s = pending.front();
    pending.pop();
    const int32_t t = map[s];
    const int32_t num_arcs = a.arc_begin[s + 1] - a.arc_begin[s];
    if (a.final_cost[s] != b.final_cost[t] || num_arcs != b.arc_begin[t + 1] - b.arc_begin[t]) {
      *why = "final cost or number of arcs of state " + std::to_string(s);
      return false;
    }
    for (int32_t i = 0; i < num_arcs; ++i) {
      const GraphArc& x = a.arcs[a.arc_begin[s] + i];
      const GraphArc& y = b.arcs[b.arc_begin[t] + i];
      if (x.ilabel != y.ilabel || x.olabel != y.olabel || x.weight != y.weight) {
        *why = "arc " + std::to_string(i) + " of state " + std::to_string(s);
        return false;
      }
      if (map[x.next] == -1) {
        map[x.next] = y.next;
        pending.push(x.next);
      } else if (map[x.next] != y.next) {
        *why = "destination of arc " + std::to_string(i) + " of state " + std::to_string(s);
        return false;
      }
    }
  }
  return true;
}

std::map<std::string, std::vector<int32_t>> Transcripts() {
  std::map<std::string, int32_t> ids;
  std::ifstream words(DataPath("kaldi-mono/words.txt"));
  std::string word;
  int32_t id = 0;
  while (words >> word >> id) ids[word] = id;
  std::map<std::string, std::vector<int32_t>> transcripts;
  std::ifstream text(DataPath("kaldi-mono/text"));
  std::string line;
  while (std::getline(text, line)) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    while (fields >> word) transcripts[key].push_back(ids.at(word));
  }
  return transcripts;
}

AlignGraph Lexicon() {
  std::ifstream in(DataPath("kaldi-mono/L.fst"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<AlignGraph> lexicon = ParseBinaryFst(bytes, "L.fst");
  EXPECT_TRUE(lexicon.ok()) << lexicon.status();
  return *lexicon;
}

TEST(TrainingGraphCompilerTest, KaldisGraphsUpToNumbering) {
  absl::StatusOr<GmmModel> model = ReadKaldiModelFile(DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(model.ok()) << model.status();
  TrainingGraphOptions options;
  options.transition_scale = 0.0f;
  options.self_loop_scale = 0.0f;
  absl::StatusOr<TrainingGraphCompiler> compiler = TrainingGraphCompiler::Create(
      model->hmm(), MonophoneContext(model->hmm()), Lexicon(), {}, options);
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  const auto transcripts = Transcripts();
  absl::StatusOr<std::unique_ptr<FstTableReader>> kaldi =
      FstTableReader::Open("ark:" + DataPath("kaldi-mono/graphs.fsts"));
  ASSERT_TRUE(kaldi.ok()) << kaldi.status();
  std::string key;
  AlignGraph expected;
  int compared = 0;
  while (true) {
    absl::StatusOr<bool> more = (*kaldi)->Next(&key, &expected);
    ASSERT_TRUE(more.ok()) << more.status();
    if (!*more) break;
    absl::StatusOr<AlignGraph> ours = compiler->Compile(transcripts.at(key));
    ASSERT_TRUE(ours.ok()) << key << ": " << ours.status();
    std::string why;
    EXPECT_TRUE(SameUpToNumbering(*ours, expected, &why)) << key << ": " << why;
    ++compared;
  }
  EXPECT_EQ(compared, 6);
}

std::vector<std::pair<std::string, AlignGraph>> ReadGraphs(const std::string& rspecifier) {
  std::vector<std::pair<std::string, AlignGraph>> graphs;
  absl::StatusOr<std::unique_ptr<FstTableReader>> reader = FstTableReader::Open(rspecifier);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return graphs;
  std::string key;
  AlignGraph graph;
  while (true) {
    absl::StatusOr<bool> more = (*reader)->Next(&key, &graph);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) return graphs;
    graphs.emplace_back(key, graph);
  }
}

class CompileTrainGraphsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(
        RunCommand(std::string(GMMSCORE_CLI) + " kaldi-links " + dir_.file("bin") + " >/dev/null",
                   dir_.file("log")),
        0);
  }
  // compile-train-graphs with the tri1 tree and model on the test utterances; its exit status.
  int Compile(const std::string& options, const std::string& out) {
    const std::string data = DataPath("kaldi-tri-graphs/");
    return RunCommand(dir_.file("bin/compile-train-graphs") + " " + options + " " +
                          DataPath("kaldi-tri-tree/tree") + " " +
                          DataPath("kaldi-tri-tree/final.trans") + " " + data +
                          "L.fst ark:" + data + "text.int " + out,
                      dir_.file("log"));
  }
  std::string log() const { return ReadFile(dir_.file("log")); }
  TempDir dir_;
};

TEST_F(CompileTrainGraphsTest, TriphoneGraphsAreKaldis) {
  const std::string disambig = "--read-disambig-syms=" + DataPath("kaldi-tri-graphs/disambig.int");
  ASSERT_EQ(Compile(disambig, "'ark:| gzip -c >" + dir_.file("fsts.gz") + "'"), 0) << log();
  EXPECT_NE(log().find("compile-train-graphs: succeeded for 3 graphs, failed for 0"),
            std::string::npos)
      << log();
  const auto ours = ReadGraphs("ark:gunzip -c " + dir_.file("fsts.gz") + " |");
  const auto kaldi = ReadGraphs("ark:" + DataPath("kaldi-tri-graphs/graphs_tri1.fsts"));
  ASSERT_EQ(ours.size(), 3u);
  ASSERT_EQ(kaldi.size(), 3u);
  for (size_t i = 0; i < kaldi.size(); ++i) {
    EXPECT_EQ(ours[i].first, kaldi[i].first);
    std::string why;
    EXPECT_TRUE(SameUpToNumbering(ours[i].second, kaldi[i].second, &why))
        << kaldi[i].first << ": " << why;
  }
}

// --rm-eps: the triphone graphs have H's disambiguation symbols (the pseudo-epsilon at the start),
// so some epsilons go before minimization (what goes: local_epsilon_removal_test).
TEST_F(CompileTrainGraphsTest, RmEpsRemovesEpsilonsBeforeMinimization) {
  const std::string disambig = "--read-disambig-syms=" + DataPath("kaldi-tri-graphs/disambig.int");
  ASSERT_EQ(Compile(disambig + " --rm-eps=true", "ark:" + dir_.file("rm.fsts")), 0) << log();
  const auto removed = ReadGraphs("ark:" + dir_.file("rm.fsts"));
  const auto kaldi = ReadGraphs("ark:" + DataPath("kaldi-tri-graphs/graphs_tri1.fsts"));
  ASSERT_EQ(removed.size(), kaldi.size());
  for (size_t i = 0; i < kaldi.size(); ++i) {
    auto epsilons = [](const AlignGraph& g) {
      return std::count_if(g.arcs.begin(), g.arcs.end(),
                           [](const GraphArc& arc) { return arc.ilabel == 0; });
    };
    EXPECT_LE(removed[i].second.num_arcs(), kaldi[i].second.num_arcs()) << kaldi[i].first;
    EXPECT_LT(epsilons(removed[i].second), epsilons(kaldi[i].second)) << kaldi[i].first;
  }
}

TEST_F(CompileTrainGraphsTest, ErrorsAsKaldis) {
  // Without the disambiguation symbols the lexicon's #0... are taken for phones the model lacks.
  EXPECT_EQ(Compile("", "ark:" + dir_.file("out.fsts")), 255);
  EXPECT_NE(log().find("ERROR (compile-train-graphs"), std::string::npos) << log();
  // An output that cannot be opened: an error naming it, no crash.
  EXPECT_EQ(Compile("--read-disambig-syms=" + DataPath("kaldi-tri-graphs/disambig.int"),
                    "ark:" + dir_.file("missing/out.fsts")),
            255);
  EXPECT_NE(log().find("missing/out.fsts"), std::string::npos) << log();
  // A phone that is not a disambiguation symbol listed as one.
  const std::string bad = dir_.file("bad.int");
  ASSERT_EQ(RunCommand("echo 5 >" + bad, dir_.file("log")), 0);
  EXPECT_EQ(Compile("--read-disambig-syms=" + bad, "ark:" + dir_.file("out.fsts")), 255);
  EXPECT_NE(log().find("disambiguation symbol 5 is also a phone"), std::string::npos) << log();
  // Kaldi's parser: options take '='; a usage error exits 1.
  EXPECT_EQ(RunCommand(dir_.file("bin/compile-train-graphs") + " a b", dir_.file("log")), 1);
}

}  // namespace
}  // namespace gmmscore::testing
