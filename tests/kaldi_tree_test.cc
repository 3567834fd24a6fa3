// Kaldi's decision trees (model/context_dependency.h, formats/kaldi_tree.h) on real Kaldi trees:
// the monophone tree of tests/data/kaldi-tri-mono (train_mono.sh's, with shared phones) read,
// written back byte for byte and built again by MonophoneTree to the same bytes; the triphone
// tree of tests/data/kaldi-tri-tree (tri1) and, where the shared test data is beside the
// checkout, those of tri2b and tri3b, whose Compute must give exactly the pdfs their models'
// transition-states hold, in some context for each and in none for any other; binary and text
// round trips; broken and hostile trees.
#include "formats/kaldi_tree.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "formats/kaldi_io.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_phone_sets.h"
#include "formats/kaldi_stream.h"
#include "formats/kaldi_topology.h"
#include "model/context_dependency.h"
#include "model/monophone_tree.h"
#include "model/tree_transition_model.h"
#include "tests/test_util.h"

namespace gmmscore::testing {
namespace {

std::string Mono(const std::string& name) { return DataPath("kaldi-tri-mono/" + name); }

// The shared Kaldi data beside the checkout (../shared/testdata), or GMMSCORE_SHARED_TESTDATA.
std::string KaldiTriPath(const std::string& relative) {
  if (const char* shared = std::getenv("GMMSCORE_SHARED_TESTDATA")) {
    return std::string(shared) + "/kaldi-tri/" + relative;
  }
  return DataPath("../../../shared/testdata/kaldi-tri/" + relative);
}

std::string Written(const ContextDependency& tree, bool binary) {
  std::ostringstream os;
  KaldiWriter(os, binary).BinaryMarker();
  WriteKaldiTree(tree, os, binary);
  return os.str();
}

absl::StatusOr<ContextDependency> Parse(const std::string& bytes,
                                        const std::string& name = "tree") {
  std::istringstream is(bytes);
  KaldiReader in(is, name, KaldiReader::ConsumeBinaryMarker(is));
  return ReadKaldiTree(in);
}

TransitionModel ReadTransitions(const std::string& path) {
  auto input = InputStream::Open(path);
  EXPECT_TRUE(input.ok()) << input.status();
  std::istream& is = (*input)->stream();
  KaldiReader in(is, path, KaldiReader::ConsumeBinaryMarker(is));
  auto tm = ReadKaldiTransitionModel(in);
  EXPECT_TRUE(tm.ok()) << tm.status();
  return tm.ok() ? *std::move(tm) : TransitionModel();
}

TEST(KaldiTreeTest, MonophoneTreeReadsAndWritesBackByteForByte) {
  const std::string kaldi = ReadFile(Mono("tree"));
  auto tree = ReadKaldiTreeFile(Mono("tree"));
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->context_width(), 1);
  EXPECT_EQ(tree->central_position(), 0);
  EXPECT_EQ(tree->NumPdfs(), 127);
  EXPECT_EQ(Written(*tree, true), kaldi);
  // Text: Kaldi's tokens, and back to the same tree.
  const std::string text = Written(*tree, false);
  EXPECT_EQ(text.rfind("ContextDependency 1 0 ToPdf SE 0 [ 1 2 3 ", 0), 0u) << text.substr(0, 80);
  EXPECT_NE(text.find("TE -1 5 ( CE 0 CE 1 CE 2 CE 3 CE 4 ) \n"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 24), "} \nEndContextDependency ");
  auto again = Parse(text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *tree);
  // Through files: text, then binary again.
  TempDir dir;
  ASSERT_TRUE(WriteKaldiTreeFile(*tree, dir.file("tree.txt"), false).ok());
  auto from_text = ReadKaldiTreeFile(dir.file("tree.txt"));
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  ASSERT_TRUE(WriteKaldiTreeFile(*from_text, dir.file("tree"), true).ok());
  EXPECT_EQ(ReadFile(dir.file("tree")), kaldi);
}

TEST(KaldiTreeTest, MonophoneTreeIsGmmInitMonosToTheByte) {
  std::vector<std::string> warnings;
  auto topo = ReadKaldiTopologyFile(Mono("topo"), &warnings);
  ASSERT_TRUE(topo.ok()) << topo.status();
  auto sets = ReadPhoneSetsFile(Mono("sets.int"));
  ASSERT_TRUE(sets.ok()) << sets.status();
  std::vector<int32_t> num_pdf_classes(size_t(topo->phones.back()) + 1, 0);
  for (int32_t phone : topo->phones) {
    num_pdf_classes[size_t(phone)] = NumPdfClasses(topo->TopologyForPhone(phone));
  }
  auto tree = MonophoneTree(*sets, num_pdf_classes, &warnings);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(Written(*tree, true), ReadFile(Mono("tree")));
  // The sets' pdfs in the sets' order, each set's by pdf class; every phone of a set alike.
  int32_t next_pdf = 0;
  for (const std::vector<int32_t>& set : *sets) {
    const int32_t classes = num_pdf_classes[size_t(set[0])];
    for (int32_t phone : set) {
      for (int32_t c = 0; c < classes; ++c) {
        EXPECT_EQ(tree->Compute(std::vector<int32_t>{phone}, c), next_pdf + c) << phone;
      }
      EXPECT_EQ(tree->Compute(std::vector<int32_t>{phone}, classes), std::nullopt);
    }
    next_pdf += classes;
  }
  EXPECT_EQ(tree->NumPdfs(), next_pdf);

  // One set per phone (gmm-init-mono without --shared-phones): sets of one phone make a table on
  // the phone, pdfs in phone order; a phone not in the topology has none.
  std::vector<std::vector<int32_t>> singletons;
  for (int32_t phone : topo->phones) singletons.push_back({phone});
  auto plain = MonophoneTree(singletons, num_pdf_classes, &warnings);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->NumPdfs(), 10 * 5 + 156 * 3);
  EXPECT_EQ(plain->to_pdf().nodes()[0].kind, EventMap::Kind::kTable);
  EXPECT_EQ(plain->Compute(std::vector<int32_t>{2}, 0), 5);
  EXPECT_EQ(plain->Compute(std::vector<int32_t>{11}, 2), 52);
  EXPECT_EQ(plain->Compute(std::vector<int32_t>{167}, 0), std::nullopt);
  // The transition model it makes has a transition-state per emitting state of every phone.
  auto hmm = TransitionModelFromTree(*plain, *topo, &warnings);
  ASSERT_TRUE(hmm.ok()) << hmm.status();
  EXPECT_EQ(hmm->NumTransitionStates(), 518);
  EXPECT_EQ(hmm->NumPdfs(), 518);
  EXPECT_TRUE(warnings.empty());
}

TEST(KaldiTreeTest, MonophoneTreeErrors) {
  std::vector<std::string> warnings;
  const std::vector<int32_t> classes = {0, 3, 3, 5};
  EXPECT_FALSE(MonophoneTree({}, classes, &warnings).ok());
  EXPECT_FALSE(MonophoneTree({{1}, {}}, classes, &warnings).ok());
  EXPECT_FALSE(MonophoneTree({{1, 2}, {2, 3}}, classes, &warnings).ok());  // 2 twice
  EXPECT_FALSE(MonophoneTree({{2, 1}}, classes, &warnings).ok());          // not sorted
  EXPECT_FALSE(MonophoneTree({{1}, {4}}, classes, &warnings).ok());        // not in the topology
  EXPECT_TRUE(warnings.empty());
  // Mixed lengths in one set: the most, with Kaldi's warning.
  auto tree = MonophoneTree({{1, 3}, {2}}, classes, &warnings);
  ASSERT_TRUE(tree.ok()) << tree.status();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("Mismatching lengths within a phone set: 5 vs. 3"), std::string::npos);
  EXPECT_EQ(tree->NumPdfs(), 8);
  EXPECT_EQ(tree->Compute(std::vector<int32_t>{2}, 2), 7);
}

// Every transition-state of a model: in which contexts (left, right; 0 for none) its pdf class of
// its phone reaches its pdf. Exactly the model's tuples must be reached, each in some context
// (under a sanitizer, every kSanitizedStride-th left context is asked: each answer must be one of
// the model's, but not every tuple need be reached).
void ExpectTreeMatchesModel(const ContextDependency& tree, const TransitionModel& tm) {
  ASSERT_EQ(tree.context_width(), 3);
  ASSERT_EQ(tree.central_position(), 1);
  EXPECT_EQ(tree.NumPdfs(), tm.NumPdfs());
  // The constructor gmm-init-model uses gives this very transition model.
  std::vector<std::string> warnings;
  auto rebuilt = TransitionModelFromTree(tree, tm.topology(), &warnings);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_EQ(rebuilt->tuples(), tm.tuples());
  EXPECT_TRUE(warnings.empty());

  // Per (phone, pdf class): whether each pdf is the model's for it, and reached. Flat tables, as
  // every context of every phone is asked (millions of lookups, slow under sanitizers otherwise).
  std::map<std::pair<int32_t, int32_t>, std::vector<char>> allowed, reached;
  for (const TransitionTuple& t : tm.tuples()) {
    const HmmState& state = tm.topology().TopologyForPhone(t.phone)[size_t(t.hmm_state)];
    std::vector<char>& pdfs = allowed[{t.phone, state.forward_pdf_class}];
    pdfs.resize(size_t(tm.NumPdfs()));
    pdfs[size_t(t.forward_pdf)] = 1;
  }
  std::vector<int32_t> context = {0};
  context.insert(context.end(), tm.topology().phones.begin(), tm.topology().phones.end());
  for (int32_t phone : tm.topology().phones) {
    const int32_t classes = NumPdfClasses(tm.topology().TopologyForPhone(phone));
    for (int32_t c = 0; c < classes; ++c) {
      const auto it = allowed.find({phone, c});
      ASSERT_NE(it, allowed.end()) << "phone " << phone << " class " << c << " has no tuple";
      const std::vector<char>& ok = it->second;
      std::vector<char>& seen = reached[{phone, c}];
      seen.resize(ok.size());
      for (size_t l = 0; l < context.size(); l += kSanitizedStride) {
        for (int32_t right : context) {
          const int32_t window[] = {context[l], phone, right};
          const std::optional<int32_t> pdf = tree.Compute(window, c);
          if (!pdf.has_value() || *pdf < 0 || size_t(*pdf) >= ok.size() || !ok[size_t(*pdf)]) {
            FAIL() << context[l] << " " << phone << " " << right << " class " << c << " -> pdf "
                   << (pdf.has_value() ? std::to_string(*pdf) : "none");
          }
          seen[size_t(*pdf)] = 1;
        }
      }
    }
  }
  // Every pdf reached in some context: a claim about all contexts, so where all were asked.
  if (kSanitizedStride == 1) {
    EXPECT_EQ(reached, allowed);
  }
}

TEST(KaldiTreeTest, TriphoneTreeGivesTheModelsPdfs) {
  const std::string path = DataPath("kaldi-tri-tree/tree");
  auto tree = ReadKaldiTreeFile(path);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->NumPdfs(), 280);
  ExpectTreeMatchesModel(*tree, ReadTransitions(DataPath("kaldi-tri-tree/final.trans")));
  // Round trips: binary to Kaldi's bytes, text to the same tree.
  EXPECT_EQ(Written(*tree, true), ReadFile(path));
  auto from_text = Parse(Written(*tree, false));
  ASSERT_TRUE(from_text.ok()) << from_text.status();
  EXPECT_EQ(*from_text, *tree);
  // A window of the wrong width or with a negative phone: no pdf.
  EXPECT_EQ(tree->Compute(std::vector<int32_t>{0, 20}, 0), std::nullopt);
  EXPECT_EQ(tree->Compute(std::vector<int32_t>{-1, 20, 0}, 0), std::nullopt);
}

TEST(KaldiTreeTest, SharedTriphoneTreesGiveTheirModelsPdfs) {
  if (!std::filesystem::exists(KaldiTriPath("models/tri2b/tree"))) {
    GTEST_SKIP() << "no shared Kaldi data at " << KaldiTriPath("");
  }
  for (const char* model : {"tri1", "tri2b", "tri3b"}) {
    SCOPED_TRACE(model);
    const std::string dir = KaldiTriPath(std::string("models/") + model);
    auto tree = ReadKaldiTreeFile(dir + "/tree");
    ASSERT_TRUE(tree.ok()) << tree.status();
    ExpectTreeMatchesModel(*tree, ReadTransitions(dir + "/final.mdl"));
    EXPECT_EQ(Written(*tree, true), ReadFile(dir + "/tree"));
  }
}

// ---- Broken and hostile trees ----

TEST(KaldiTreeTest, TruncatedTreesAreErrors) {
  auto tree = ReadKaldiTreeFile(Mono("tree"));
  ASSERT_TRUE(tree.ok());
  for (const bool binary : {true, false}) {
    const std::string bytes = Written(*tree, binary);
    for (size_t n = 0; n < bytes.size(); ++n) {
      auto cut = Parse(bytes.substr(0, n), "cut");
      ASSERT_FALSE(cut.ok()) << n << (binary ? " binary" : " text");
      EXPECT_EQ(cut.status().message().rfind("cut", 0), 0u) << cut.status();
    }
  }
  // Through a file, the error names it.
  TempDir dir;
  WriteFile(dir.file("tree"), ReadFile(Mono("tree")).substr(0, 1000));
  auto cut = ReadKaldiTreeFile(dir.file("tree"));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find(dir.file("tree")), std::string::npos) << cut.status();
}

void ExpectError(const std::string& text, const std::string& message) {
  auto tree = Parse(text);
  ASSERT_FALSE(tree.ok()) << text;
  EXPECT_NE(tree.status().message().find(message), std::string::npos) << tree.status();
}

TEST(KaldiTreeTest, MalformedTreesAreErrors) {
  const std::string good =
      "ContextDependency 1 0 ToPdf TE 0 2 ( NULL TE -1 1 ( CE 0 ) \n) \n"
      "EndContextDependency ";
  auto tree = Parse(good);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(Written(*tree, false), good);
  EXPECT_EQ(tree->Compute(std::vector<int32_t>{1}, 0), 0);
  EXPECT_EQ(tree->Compute(std::vector<int32_t>{0}, 0), std::nullopt);  // a NULL entry

  ExpectError("ContextDependency 1 0 ToPdf XE 0 EndContextDependency ", "found XE");
  ExpectError("ContextDependency 1 0 ToPdf NULL EndContextDependency ", "NULL where a map");
  ExpectError("ContextDependency 1 0 ToPdf SE 0 [ 1 ]\n{ CE 0 NULL } EndContextDependency ",
              "NULL where a map");
  ExpectError("ContextDependency 1 0 ToPdf SE 0 [ 2 1 ]\n{ CE 0 CE 1 } EndContextDependency ",
              "not sorted");
  ExpectError("ContextDependency 1 0 ToPdf CE 0 CE 1 EndContextDependency ",
              "expected EndContextDependency");
  ExpectError("ContextDependency 1 0 ToPdf TE 0 2 ( CE 0 CE 1 CE 2 ) EndContextDependency ",
              "expected )");
  ExpectError("ContextDependency 2 2 ToPdf CE 0 EndContextDependency ", "central position");
  ExpectError("ContextDependency 1 0 ToPdf CE 2147483647 EndContextDependency ", "out of range");
  ExpectError("ContextDependency 1 0 ToPdf TE 0 -1 ( ) EndContextDependency ", "table size");
  // Huge tables: refused before anything is sized by them.
  ExpectError("ContextDependency 1 0 ToPdf TE 0 4000000000 ( ) EndContextDependency ",
              "more than the");
  ExpectError("ContextDependency 1 0 ToPdf TE 0 1000000 ( ) EndContextDependency ",
              "1000000 table entries take at least 5000000 bytes");
  // From a pipe, whose size is unknown: tables that lie about their size end with the data.
  TempDir dir;
  std::string nested = "ContextDependency 1 0 ToPdf ";
  for (int i = 0; i < 1000; ++i) nested += "TE 0 1048577 ( ";
  WriteFile(dir.file("tree"), nested);
  auto piped = ReadKaldiTreeFile("cat " + dir.file("tree") + " |");
  ASSERT_FALSE(piped.ok());
  EXPECT_NE(piped.status().message().find("unexpected end of file"), std::string::npos)
      << piped.status();
  // The same in a binary tree: the first table's size, a uint32 after "TE ", key and size byte.
  std::string binary = Written(*tree, true);
  const size_t size_at = binary.find("TE ") + 3 + 5 + 1;
  ASSERT_EQ(binary[size_at - 1], char(-4));
  binary.replace(size_at, 4, "\xff\xff\xff\xff");
  auto huge = Parse(binary);
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.status().message().find("4294967295 table entries"), std::string::npos)
      << huge.status();
  binary[size_at - 1] = 4;  // a signed size byte where Kaldi writes an unsigned one
  EXPECT_FALSE(Parse(binary).ok());
  // Older trees' ToLength map is read and dropped.
  auto old = Parse("ContextDependency 1 0 ToLength CE 3 ToPdf CE 0 EndContextDependency ");
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->NumPdfs(), 1);
}

// Maps nest as deep as a file likes: no recursion reads, walks or writes them.
TEST(KaldiTreeTest, DeepTreesNeedNoStack) {
  constexpr int kDepth = 300000;
  std::string text = "ContextDependency 1 0 ToPdf ";
  for (int i = 0; i < kDepth; ++i) text += "SE 0 [ 1 ]\n{ CE 1 ";
  text += "CE 0 ";
  for (int i = 0; i < kDepth; ++i) text += "} \n";
  text += "EndContextDependency ";
  auto tree = Parse(text);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ(tree->to_pdf().nodes().size(), size_t(2 * kDepth + 1));
  EXPECT_EQ(tree->Compute(std::vector<int32_t>{1}, 0), 1);
  EXPECT_EQ(tree->Compute(std::vector<int32_t>{2}, 0), 0);
  EXPECT_EQ(tree->to_pdf().MultiMap({}), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(Written(*tree, false), text);
  // Unclosed, it ends in an error.
  ExpectError(text.substr(0, text.size() / 2), "unexpected end of file");
}

TEST(KaldiTreeTest, EventMapShapeIsChecked) {
  using Node = EventMap::Node;
  const Node leaf{.kind = EventMap::Kind::kConstant, .answer = 3};
  EXPECT_TRUE(EventMap::Create({leaf}).ok());
  EXPECT_FALSE(EventMap::Create({}).ok());
  // A child before its parent, a child of two parents, a node nobody's child, a split's null.
  Node table{.kind = EventMap::Kind::kTable, .key = 0, .children = {0}};
  EXPECT_FALSE(EventMap::Create({table}).ok());
  table.children = {1, 1};
  EXPECT_FALSE(EventMap::Create({table, leaf}).ok());
  table.children = {1};
  EXPECT_FALSE(EventMap::Create({table, leaf, leaf}).ok());
  EXPECT_TRUE(EventMap::Create({table, leaf}).ok());
  Node split{.kind = EventMap::Kind::kSplit, .key = 0, .children = {1, EventMap::kNullChild}};
  EXPECT_FALSE(EventMap::Create({split, leaf}).ok());
  split.children = {1, 2};
  split.yes_set = {4, 4};
  EXPECT_FALSE(EventMap::Create({split, leaf, leaf}).ok());
  split.yes_set = {4, 5};
  auto map = EventMap::Create({split, leaf, Node{.answer = 7}});
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->Map(TreeEvent{{0, 5}}), 3);
  EXPECT_EQ(map->Map(TreeEvent{{0, 6}}), 7);
  EXPECT_EQ(map->Map(TreeEvent{{1, 5}}), std::nullopt);  // the key asked about is missing
  EXPECT_EQ(map->MultiMap(TreeEvent{{1, 5}}), (std::vector<int32_t>{3, 7}));
  EXPECT_EQ(map->MaxAnswer(), 7);
}

}  // namespace
}  // namespace gmmscore::testing
