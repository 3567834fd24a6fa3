// Sphinx .mfc feature files: the real pocketsphinx test data, round trips, both byte orders and
// malformed files.
#include "formats/sphinx_features.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace gmmscore {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kTestData[] = "/usr/share/pocketsphinx/test/data";

std::string ReadBytes(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>()};
}

absl::StatusOr<Matrix> ReadBytesAsFeatures(const std::string& bytes, int32_t dim = 13) {
  std::istringstream is(bytes);
  return ReadSphinxFeatures(is, "test.mfc", dim);
}

// Reverses the bytes of every 4-byte word: the same file written on a big-endian machine.
std::string SwapWords(std::string bytes) {
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    std::swap(bytes[i], bytes[i + 3]);
    std::swap(bytes[i + 1], bytes[i + 2]);
  }
  return bytes;
}

class SphinxFeaturesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(goforward_)) {
      GTEST_SKIP() << goforward_ << " is missing (Debian package pocketsphinx-testdata)";
    }
  }
  const std::string goforward_ = std::string(kTestData) + "/goforward.mfc";
};

TEST_F(SphinxFeaturesTest, ReadsGoforward) {
  std::ifstream is(goforward_, std::ios::binary);
  auto m = ReadSphinxFeatures(is, goforward_);
  ASSERT_TRUE(m.ok()) << m.status();
  // 13732 bytes: a 4-byte header and 3432 floats, 264 frames of 13 cepstra.
  EXPECT_EQ(m->rows, 264);
  EXPECT_EQ(m->cols, 13);
  for (float v : m->data) ASSERT_TRUE(std::isfinite(v));
  EXPECT_FLOAT_EQ(m->at(0, 0), 26.777723f);
  EXPECT_FLOAT_EQ(m->at(0, 1), -9.0183811f);
  EXPECT_FLOAT_EQ(m->at(263, 12), -2.7354758f);
}

TEST_F(SphinxFeaturesTest, ReadsEveryTidigitsFile) {
  const std::filesystem::path dir = std::string(kTestData) + "/tidigits";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " is missing";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".mfc") continue;
    ++files;
    std::ifstream is(entry.path(), std::ios::binary);
    auto m = ReadSphinxFeatures(is, entry.path().string());
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(size_t(m->rows) * 13 * 4 + 4, std::filesystem::file_size(entry.path()));
    for (float v : m->data) ASSERT_TRUE(std::isfinite(v)) << entry.path();
  }
  EXPECT_GT(files, 0);
}

TEST_F(SphinxFeaturesTest, RoundTripReproducesTheFile) {
  const std::string original = ReadBytes(goforward_);
  auto m = ReadBytesAsFeatures(original);
  ASSERT_TRUE(m.ok()) << m.status();
  std::ostringstream os;
  ASSERT_TRUE(WriteSphinxFeatures(*m, os).ok());
  EXPECT_EQ(os.str(), original);
  auto again = ReadBytesAsFeatures(os.str());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, *m);
}

TEST_F(SphinxFeaturesTest, ReadsBigEndian) {
  const std::string original = ReadBytes(goforward_);
  auto little = ReadBytesAsFeatures(original);
  auto big = ReadBytesAsFeatures(SwapWords(original));
  ASSERT_TRUE(little.ok()) << little.status();
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(*big, *little);
}

TEST_F(SphinxFeaturesTest, OtherFrameSizes) {
  auto m = ReadBytesAsFeatures(ReadBytes(goforward_), 39);  // 3432 = 88 x 39
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->rows, 88);
  EXPECT_EQ(m->cols, 39);
}

TEST_F(SphinxFeaturesTest, CountNotAMultipleOfTheDimension) {
  auto m = ReadBytesAsFeatures(ReadBytes(goforward_), 10);
  EXPECT_THAT(m.status().message(),
              AllOf(HasSubstr("test.mfc"), HasSubstr("3432 values"), HasSubstr("frames of 10")));
}

TEST_F(SphinxFeaturesTest, HeaderNotMatchingTheSize) {
  const std::string extra_byte = ReadBytes(goforward_) + "x";
  EXPECT_THAT(ReadBytesAsFeatures(extra_byte).status().message(),
              AllOf(HasSubstr("test.mfc: byte 0"), HasSubstr("counts 3432 floats")));
  std::string truncated = ReadBytes(goforward_);
  truncated.resize(truncated.size() - 52);
  EXPECT_THAT(ReadBytesAsFeatures(truncated).status().message(),
              AllOf(HasSubstr("test.mfc: byte 0"), HasSubstr("13676 bytes after it")));
}

TEST(SphinxFeaturesErrors, TooShortForTheHeader) {
  EXPECT_THAT(ReadBytesAsFeatures("ab").status().message(),
              AllOf(HasSubstr("test.mfc: byte 0"), HasSubstr("too short")));
}

TEST(SphinxFeaturesErrors, EmptyFileHasNoFrames) {
  auto m = ReadBytesAsFeatures(std::string(4, '\0'));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->rows, 0);
}

}  // namespace
}  // namespace gmmscore
