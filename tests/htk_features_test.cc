// HTK parameter files: byte layout, round trip, _K files, and malformed headers and data.
#include "formats/htk_features.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "absl/strings/match.h"

namespace gmmscore {
namespace {

constexpr int16_t kMfccEDeltas = 06 | 0100 | 0400;  // MFCC_E_D

std::string Write(const Matrix& m, int16_t kind = kHtkMfcc) {
  std::ostringstream os;
  EXPECT_TRUE(WriteHtkFeatures(m, os, kind).ok());
  return os.str();
}

absl::StatusOr<Matrix> Read(const std::string& bytes) {
  std::istringstream is(bytes);
  return ReadHtkFeatures(is, "feats.htk");
}

// Reading `bytes` fails with a message that names the file, a byte offset and contains `expected`.
void ExpectReadError(const std::string& bytes, const std::string& expected) {
  auto m = Read(bytes);
  ASSERT_FALSE(m.ok());
  const std::string message(m.status().message());
  EXPECT_TRUE(absl::StrContains(message, "feats.htk: byte ")) << message;
  EXPECT_TRUE(absl::StrContains(message, expected)) << message;
}

Matrix TwoFrames() {
  Matrix m(2, 3);
  m.data = {1.0f, -2.5f, 1e-30f, 3.25e7f, 0.1f, -0.0f};
  return m;
}

TEST(HtkFeaturesTest, WritesBigEndianHeaderAndFloats) {
  Matrix m(1, 1);
  m.data = {1.0f};
  const std::string expected("\0\0\0\1\0\1\x86\xa0\0\4\0\6\x3f\x80\0\0", 16);
  EXPECT_EQ(Write(m), expected);
}

TEST(HtkFeaturesTest, RoundTrip) {
  const Matrix m = TwoFrames();
  auto again = Read(Write(m, kMfccEDeltas));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, m);
}

TEST(HtkFeaturesTest, IgnoresTheCrcOfKFiles) {
  std::string bytes = Write(TwoFrames());
  bytes[10] = '\x10';  // MFCC_K: 010006
  bytes += "\x12\x34";
  auto again = Read(bytes);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, TwoFrames());
}

TEST(HtkFeaturesTest, TruncatedFile) {
  const std::string bytes = Write(TwoFrames());
  ExpectReadError(bytes.substr(0, bytes.size() - 3),
                  "byte 33: truncated: the header says 2 frames of 12 bytes, the file holds 1");
  ExpectReadError(bytes.substr(0, 5), "byte 5: truncated header");
}

TEST(HtkFeaturesTest, BadKind) {
  std::string bytes = Write(TwoFrames());
  bytes[11] = '\0';
  ExpectReadError(bytes, "byte 10: WAVEFORM");
  bytes[10] = '\x04';  // MFCC_C: 02006
  bytes[11] = '\x06';
  ExpectReadError(bytes, "byte 10: compressed (_C)");
  bytes[10] = '\0';
  bytes[11] = '\x0a';
  ExpectReadError(bytes, "byte 10: DISCRETE");
}

TEST(HtkFeaturesTest, BadFrameSize) {
  std::string bytes = Write(TwoFrames());
  bytes[9] = '\x0d';
  ExpectReadError(bytes, "byte 8: frame size 13 bytes");
}

TEST(HtkFeaturesTest, WriterRejectsKindsItCannotWrite) {
  std::ostringstream os;
  EXPECT_FALSE(WriteHtkFeatures(TwoFrames(), os, 0).ok());            // WAVEFORM
  EXPECT_FALSE(WriteHtkFeatures(TwoFrames(), os, 06 | 02000).ok());   // MFCC_C
  EXPECT_FALSE(WriteHtkFeatures(TwoFrames(), os, 06 | 010000).ok());  // MFCC_K
  EXPECT_TRUE(os.str().empty());
}

}  // namespace
}  // namespace gmmscore
