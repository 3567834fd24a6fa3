// Kaldi-style tables: specifiers, archives (binary and text), ark,scp and scp with offsets,
// compressed matrices, and errors that name the file.
#include "formats/matrix_table.h"

#include <gtest/gtest.h>

#include "model/random_model.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

using testing::ReadTable;
using testing::TempDir;

TEST(TableSpecifier, ParsesKaldiForms) {
  auto a = ParseRspecifier("ark,s,cs:feats.ark");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->kind, TableKind::kArchive);
  EXPECT_EQ(a->path, "feats.ark");
  auto w = ParseWspecifier("ark,scp:out.ark,out.scp");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->kind, TableKind::kArchiveAndScript);
  EXPECT_EQ(w->script_path, "out.scp");
  auto s = ParseRspecifier("scp,sphinx,dim=39:list.scp");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->file_kind, FeatureFileKind::kSphinx);
  EXPECT_EQ(s->sphinx_dim, 39);
  EXPECT_TRUE(ParseWspecifier("ark,t:-")->text);
  EXPECT_FALSE(ParseRspecifier("feats.ark").ok());
  EXPECT_FALSE(ParseRspecifier("ark,zz:feats.ark").ok());
  EXPECT_FALSE(ParseWspecifier("scp:x.scp").ok());
}

TEST(MatrixTable, BinaryTextAndScriptRoundTrips) {
  TempDir dir;
  const Matrix a = RandomFeatures(7, 5, 0.0f, 100.0f, 1);
  const Matrix b = RandomFeatures(1, 5, -3.0f, 1e-3f, 2);
  for (const std::string& wspec : {"ark:" + dir.file("t.ark"), "ark,t:" + dir.file("t.txt"),
                                   "ark,scp:" + dir.file("s.ark") + "," + dir.file("s.scp")}) {
    auto writer = MatrixTableWriter::Open(wspec);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Write("utt-a", a).ok());
    ASSERT_TRUE((*writer)->Write("utt-b", b).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
  for (const std::string& rspec : {"ark:" + dir.file("t.ark"), "ark:" + dir.file("t.txt"),
                                   "scp:" + dir.file("s.scp"), "ark:" + dir.file("s.ark")}) {
    const auto table = ReadTable(rspec);
    ASSERT_EQ(table.size(), 2u) << rspec;
    EXPECT_EQ(table.at("utt-a"), a) << rspec;  // text uses shortest round-trip floats: exact
    EXPECT_EQ(table.at("utt-b"), b) << rspec;
  }
}

TEST(MatrixTable, PipesBothWaysAndCommandsThatFail) {
  TempDir dir;
  const Matrix a = RandomFeatures(7, 5, 0.0f, 100.0f, 1);
  auto writer = MatrixTableWriter::Open("ark:| gzip -c >" + dir.file("t.ark.gz"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  EXPECT_EQ((*writer)->description(), "'| gzip -c >" + dir.file("t.ark.gz") + "'");
  ASSERT_TRUE((*writer)->Write("utt-a", a).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  const auto table = ReadTable("ark,s,cs:gunzip -c " + dir.file("t.ark.gz") + " |");
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table.at("utt-a"), a);

  auto failing = MatrixTableReader::Open("ark:gunzip -c " + dir.file("t.ark.gz") + "; exit 9 |");
  ASSERT_TRUE(failing.ok());
  std::string key;
  Matrix m;
  EXPECT_TRUE(*(*failing)->Next(&key, &m));
  const absl::StatusOr<bool> end = (*failing)->Next(&key, &m);
  EXPECT_EQ(end.status().message(),
            "command 'gunzip -c " + dir.file("t.ark.gz") + "; exit 9' exited with status 9");

  auto broken = MatrixTableWriter::Open("ark,t:| cat >/dev/null; exit 2");
  ASSERT_TRUE(broken.ok());
  ASSERT_TRUE((*broken)->Write("utt-a", a).ok());
  EXPECT_EQ((*broken)->Close().code(), absl::StatusCode::kDataLoss);
}

TEST(MatrixTable, ReadsKaldiCompressedMatrices) {
  // A 2 x 3 "CM2" (two bytes per value) matrix: min 1, range 65535 -> value = 1 + code.
  std::string bytes = "key ";
  bytes += std::string("\0BCM2 ", 6);
  const float min = 1.0f, range = 65535.0f;
  const int32_t rows = 2, cols = 3;
  bytes.append(reinterpret_cast<const char*>(&min), 4);
  bytes.append(reinterpret_cast<const char*>(&range), 4);
  bytes.append(reinterpret_cast<const char*>(&rows), 4);
  bytes.append(reinterpret_cast<const char*>(&cols), 4);
  for (const uint16_t code : std::vector<uint16_t>{0, 1, 2, 10, 20, 65534})
    bytes.append(reinterpret_cast<const char*>(&code), 2);
  TempDir dir;
  testing::WriteFile(dir.file("c.ark"), bytes);
  const auto table = ReadTable("ark:" + dir.file("c.ark"));
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table.at("key").data, (std::vector<float>{1, 2, 3, 11, 21, 65535}));
}

TEST(MatrixTable, ErrorsNameTheFileAndKey) {
  TempDir dir;
  EXPECT_EQ(MatrixTableReader::Open("ark:" + dir.file("missing.ark")).status().code(),
            absl::StatusCode::kNotFound);
  {
    auto writer = MatrixTableWriter::Open("ark:" + dir.file("t.ark"));
    ASSERT_TRUE((*writer)->Write("utt1", RandomFeatures(50, 13, 0, 1, 3)).ok());
  }
  const std::string bytes = testing::ReadFile(dir.file("t.ark"));
  testing::WriteFile(dir.file("cut.ark"), bytes.substr(0, bytes.size() - 10));
  auto reader = MatrixTableReader::Open("ark:" + dir.file("cut.ark"));
  ASSERT_TRUE(reader.ok());
  std::string key;
  Matrix m;
  auto r = (*reader)->Next(&key, &m);
  ASSERT_FALSE(r.ok());
  const std::string msg(r.status().message());
  EXPECT_NE(msg.find("cut.ark (key utt1): byte "), std::string::npos) << msg;
  EXPECT_NE(msg.find("ends inside a float matrix"), std::string::npos) << msg;
}

}  // namespace
}  // namespace gmmscore
