// Alignment, score and per-frame tables byte for byte as Kaldi writes them (ali.txt and
// ali_scores.txt are gmm-align-compiled's own output), through every kind of wspecifier.
#include "formats/kaldi_tables.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "formats/kaldi_io.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

using testing::DataPath;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

using namespace std::string_literals;
using Alignments = std::map<std::string, std::vector<int32_t>>;

std::string Bytes(const void* data, size_t n) {
  return std::string(static_cast<const char*>(data), n);
}

// Kaldi's WriteBasicType<int32> in binary: the size byte, then the value.
std::string BasicInt32(int32_t v) { return "\4" + Bytes(&v, 4); }

Alignments ReadAlignments(const std::string& rspecifier) {
  Alignments table;
  auto reader = Int32VectorTableReader::Open(rspecifier);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return table;
  std::string key;
  std::vector<int32_t> value;
  while (true) {
    auto more = (*reader)->Next(&key, &value);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    table[key] = value;
  }
  return table;
}

void WriteAlignments(const std::string& wspecifier, const Alignments& table) {
  auto writer = Int32VectorTableWriter::Open(wspecifier);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (const auto& [key, value] : table) ASSERT_TRUE((*writer)->Write(key, value).ok());
  ASSERT_TRUE((*writer)->Close().ok()) << wspecifier;
}

TEST(Int32VectorTable, TextIsKaldisAliTxtByteForByte) {
  const Alignments kaldi = ReadAlignments("ark:" + DataPath("kaldi-mono/ali.txt"));
  ASSERT_EQ(kaldi.size(), 6u);
  EXPECT_EQ(kaldi.at("cards-001").size(), 108u);  // frames
  EXPECT_EQ(
      (std::vector<int32_t>(kaldi.at("cards-001").begin(), kaldi.at("cards-001").begin() + 4)),
      (std::vector<int32_t>{2, 6, 5, 12}));
  TempDir dir;
  WriteAlignments("ark,t:" + dir.file("ali.txt"), kaldi);  // the keys are in sorted order
  EXPECT_EQ(ReadFile(dir.file("ali.txt")), ReadFile(DataPath("kaldi-mono/ali.txt")));
}

TEST(Int32VectorTable, BinaryIsKaldisBasicVectorHolder) {
  TempDir dir;
  WriteAlignments("ark:" + dir.file("a.ark"), {{"utt", {2, 6, -5}}, {"empty", {}}});
  const std::string expected = "empty \0B"s + BasicInt32(0) + "utt \0B"s + BasicInt32(3) +
                               BasicInt32(2) + BasicInt32(6) + BasicInt32(-5);
  EXPECT_EQ(ReadFile(dir.file("a.ark")), expected);
  const Alignments back = ReadAlignments("ark:" + dir.file("a.ark"));
  EXPECT_EQ(back.at("utt"), (std::vector<int32_t>{2, 6, -5}));
  EXPECT_TRUE(back.at("empty").empty());
}

TEST(Int32VectorTable, EveryWspecifierFormAndPipes) {
  TempDir dir;
  const Alignments table = ReadAlignments("ark:" + DataPath("kaldi-mono/ali.txt"));
  WriteAlignments("ark,scp:" + dir.file("a.ark") + "," + dir.file("a.scp"), table);
  EXPECT_EQ(ReadAlignments("scp:" + dir.file("a.scp")), table);
  EXPECT_EQ(ReadAlignments("ark:" + dir.file("a.ark")), table);
  WriteAlignments("ark,t,f:| gzip -c >" + dir.file("a.gz"), table);
  EXPECT_EQ(ReadAlignments("ark,s,cs:gunzip -c " + dir.file("a.gz") + " |"), table);
  WriteAlignments("ark,scp,t:" + dir.file("t.ark") + ",| sort -r >" + dir.file("t.scp"), table);
  EXPECT_EQ(ReadAlignments("scp:" + dir.file("t.scp")), table);
  EXPECT_EQ(ReadFile(dir.file("t.ark")), ReadFile(DataPath("kaldi-mono/ali.txt")));
}

TEST(Int32VectorTable, ErrorsNameTheTableTheKeyAndTheCommand) {
  TempDir dir;
  WriteFile(dir.file("bad.txt"), "utt1 1 2 x\n");
  std::string key;
  std::vector<int32_t> value;
  auto bad = Int32VectorTableReader::Open("ark:" + dir.file("bad.txt"));
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ((*bad)->Next(&key, &value).status().message(),
            dir.file("bad.txt") + " (key utt1): expected an integer, found 'x'");

  WriteFile(dir.file("cut.ark"), "utt1 \0B"s + BasicInt32(1000) + BasicInt32(7));
  auto cut = Int32VectorTableReader::Open("ark:" + dir.file("cut.ark"));
  ASSERT_TRUE(cut.ok());
  const std::string message((*cut)->Next(&key, &value).status().message());
  EXPECT_NE(message.find("cut.ark (key utt1): byte 17: file ends inside an integer"),
            std::string::npos)
      << message;

  auto failing =
      Int32VectorTableReader::Open("ark:cat " + DataPath("kaldi-mono/ali.txt") + "; exit 4 |");
  ASSERT_TRUE(failing.ok());
  int entries = 0;
  absl::StatusOr<bool> more;
  while ((more = (*failing)->Next(&key, &value)).ok() && *more) ++entries;
  EXPECT_EQ(entries, 6);
  EXPECT_NE(more.status().message().find("exited with status 4"), std::string::npos)
      << more.status();

  auto writer = Int32VectorTableWriter::Open("ark,t:| cat >/dev/null; exit 5");
  ASSERT_TRUE(writer.ok());
  EXPECT_EQ((*writer)->Write("has space", {1}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*writer)->Write("", {1}).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE((*writer)->Write("utt", {1, 2}).ok());
  EXPECT_EQ((*writer)->Close().message(), "command 'cat >/dev/null; exit 5' exited with status 5");

  EXPECT_FALSE(Int32VectorTableWriter::Open("ark,scp:-," + dir.file("x.scp")).ok());
  EXPECT_FALSE(Int32VectorTableWriter::Open("ark,scp:| cat," + dir.file("x.scp")).ok());
  EXPECT_FALSE(Int32VectorTableReader::Open("htk:" + dir.file("x.htk")).ok());
}

TEST(FloatTable, TextIsKaldisAliScoresTxtByteForByte) {
  const std::string kaldi = ReadFile(DataPath("kaldi-mono/ali_scores.txt"));
  TempDir dir;
  auto writer = FloatTableWriter::Open("ark,t:" + dir.file("scores.txt"));
  ASSERT_TRUE(writer.ok()) << writer.status();
  int lines = 0;
  for (const absl::string_view line : absl::StrSplit(kaldi, '\n', absl::SkipEmpty())) {
    const std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    ASSERT_EQ(fields.size(), 2u) << line;
    float score = 0;
    ASSERT_TRUE(absl::SimpleAtof(fields[1], &score)) << line;
    ASSERT_TRUE((*writer)->Write(std::string(fields[0]), score).ok());
    ++lines;
  }
  ASSERT_TRUE((*writer)->Close().ok());
  EXPECT_EQ(lines, 6);
  EXPECT_EQ(ReadFile(dir.file("scores.txt")), kaldi);
}

TEST(FloatTable, BinaryAndKaldisTextPrecision) {
  TempDir dir;
  auto binary = FloatTableWriter::Open("ark:" + dir.file("s.ark"));
  ASSERT_TRUE(binary.ok());
  const float score = -973.549f;
  ASSERT_TRUE((*binary)->Write("utt", score).ok());
  ASSERT_TRUE((*binary)->Close().ok());
  EXPECT_EQ(ReadFile(dir.file("s.ark")), "utt \0B\4"s + Bytes(&score, 4));

  auto text = FloatTableWriter::Open("ark,t:" + dir.file("s.txt"));
  ASSERT_TRUE(text.ok());
  for (const float v : {0.1f, 1.0f / 3.0f, 1234567.9f, 1e-8f, -0.0f, 100.0f})
    ASSERT_TRUE((*text)->Write("k", v).ok());
  ASSERT_TRUE((*text)->Close().ok());
  // What an ostream of precision 7 prints (Kaldi's InitKaldiOutputStream).
  EXPECT_EQ(ReadFile(dir.file("s.txt")),
            "k 0.1 \nk 0.3333333 \nk 1234568 \nk 1e-08 \nk -0 \nk 100 \n");
}

TEST(FloatVectorTable, KaldisVectorBinaryAndText) {
  TempDir dir;
  const std::vector<float> frames = {1.5f, -2.0f, 0.1f, -123.456789f};
  for (const std::string& wspec : {"ark:" + dir.file("v.ark"), "ark,t:" + dir.file("v.txt"),
                                   "ark,scp:" + dir.file("s.ark") + "," + dir.file("s.scp")}) {
    auto writer = FloatVectorTableWriter::Open(wspec);
    ASSERT_TRUE(writer.ok()) << writer.status();
    ASSERT_TRUE((*writer)->Write("utt", frames).ok());
    ASSERT_TRUE((*writer)->Write("none", {}).ok());
    ASSERT_TRUE((*writer)->Close().ok());
  }
  const int32_t n = 4, zero = 0;
  EXPECT_EQ(ReadFile(dir.file("v.ark")), "utt \0BFV \4"s + Bytes(&n, 4) + Bytes(frames.data(), 16) +
                                             "none \0BFV \4"s + Bytes(&zero, 4));
  EXPECT_EQ(ReadFile(dir.file("v.txt")), "utt  [ 1.5 -2 0.1 -123.4568 ]\nnone  [ ]\n");
  EXPECT_EQ(ReadFile(dir.file("s.scp")),
            "utt " + dir.file("s.ark") + ":4\nnone " + dir.file("s.ark") + ":35\n");
  // The vector reads back (Kaldi's Vector<float>::Read, as KaldiReader does it).
  std::ifstream is(dir.file("v.ark"), std::ios::binary);
  is.seekg(4);
  KaldiReader reader(is, "v.ark", KaldiReader::ConsumeBinaryMarker(is));
  EXPECT_EQ(*reader.FloatVector(), frames);
}

}  // namespace
}  // namespace gmmscore
