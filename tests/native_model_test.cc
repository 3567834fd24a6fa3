// The native format: round trip of the real Kaldi model and of a random one without HMM, and
// every kind of damage refused with the file and the byte.
#include "formats/native_model.h"

#include <gtest/gtest.h>

#include "formats/model_io.h"
#include "model/random_model.h"
#include "tests/test_util.h"

namespace gmmscore {
namespace {

using testing::DataPath;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

TEST(NativeModel, RoundTripIsExact) {
  TempDir dir;
  auto kaldi = LoadModel(DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(kaldi.ok()) << kaldi.status();
  const GmmModel random = RandomModel({}, 5);
  for (const GmmModel* m : {static_cast<const GmmModel*>(&kaldi->model), &random}) {
    const std::string path = dir.file("model.gmms");
    ASSERT_TRUE(WriteNativeModel(*m, path).ok());
    auto back = LoadModel(path);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->file_format, ModelFormat::kNative);
    EXPECT_EQ(back->model.spec().means, m->spec().means);
    EXPECT_EQ(back->model.spec().variances, m->spec().variances);
    EXPECT_EQ(back->model.spec().weights, m->spec().weights);
    EXPECT_EQ(back->model.spec().gauss_begin, m->spec().gauss_begin);
    EXPECT_EQ(back->model.source_format(), m->source_format());
    EXPECT_TRUE(back->model.hmm() == m->hmm());
  }
}

TEST(NativeModel, DamageIsReported) {
  TempDir dir;
  const GmmModel m = RandomModel({}, 6);
  const std::string good = dir.file("good.gmms");
  ASSERT_TRUE(WriteNativeModel(m, good).ok());
  const std::string bytes = ReadFile(good);
  auto expect_error = [&](const std::string& damaged, const std::string& what) {
    const std::string path = dir.file("bad.gmms");
    WriteFile(path, damaged);
    auto r = ReadNativeModel(path);
    ASSERT_FALSE(r.ok()) << what;
    const std::string msg(r.status().message());
    EXPECT_NE(msg.find("bad.gmms: byte "), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  };
  expect_error(bytes.substr(0, 30), "ends inside the 64-byte header");
  expect_error(bytes.substr(0, bytes.size() - 100), "truncated");
  std::string magic = bytes;
  magic[0] = 'X';
  expect_error(magic, "bad magic");
  std::string flipped = bytes;
  flipped[200] ^= 0x10;
  expect_error(flipped, "checksum mismatch");
  std::string version = bytes;
  version[8] = 9;
  expect_error(version, "unsupported version 9");
}

}  // namespace
}  // namespace gmmscore
