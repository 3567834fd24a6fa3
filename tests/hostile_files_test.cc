// Hostile and broken model and feature files (issue 15): every count a file gives is checked
// against the bytes the file has and against sane maxima before anything is sized by it, and no
// exception leaves a reader. The binary replaces the global operator new with one that counts the
// bytes live, so that each test can say how much a read may allocate; an allocation beyond that
// throws std::bad_alloc and is recorded, so a reader that sizes something from a lying header
// fails its test even where it would catch the exception.
//
// The last test is a deterministic mutation fuzzer over the real files in tests/data and files
// written from them: bit flips, truncations and large integers written over 4- and 8-byte fields
// and over the numbers of text formats; every load must end in a status, never an exception,
// within the file's size plus 64 MB.
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <new>
#include <random>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/htk_features.h"
#include "formats/htk_model.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_model.h"
#include "formats/matrix_table.h"
#include "formats/model_io.h"
#include "formats/native_model.h"
#include "formats/sphinx_features.h"
#include "formats/sphinx_model.h"
#include "formats/sphinx_s3io.h"
#include "model/random_model.h"
#include "tests/test_util.h"

// ---- The counting allocator ----

namespace {

constinit std::atomic<int64_t> g_live{0};    // bytes handed out by operator new, not yet freed
constinit std::atomic<int64_t> g_peak{0};    // the most g_live has been since the guard began
constinit std::atomic<int64_t> g_base{0};    // g_live when the guard began
constinit std::atomic<int64_t> g_limit{-1};  // bytes over g_base allowed; -1: no guard
constinit std::atomic<bool> g_limit_hit{false};

void* CountedAlloc(std::size_t n) {
  const int64_t limit = g_limit.load(std::memory_order_relaxed);
  if (limit >= 0) {
    const int64_t used = g_live.load(std::memory_order_relaxed) - g_base.load();
    if (n > static_cast<uint64_t>(INT64_MAX / 2) || used + static_cast<int64_t>(n) > limit) {
      g_limit_hit = true;
      throw std::bad_alloc();
    }
  }
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  const int64_t size = static_cast<int64_t>(malloc_usable_size(p));
  const int64_t live = g_live.fetch_add(size, std::memory_order_relaxed) + size;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return p;
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  g_live.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}

}  // namespace

void* operator new(std::size_t n) { return CountedAlloc(n); }
void* operator new[](std::size_t n) { return CountedAlloc(n); }
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, std::size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::size_t) noexcept { CountedFree(p); }

namespace gmmscore {
namespace {

using testing::DataPath;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

constexpr int64_t kMiB = int64_t{1} << 20;

// What a guarded read did: its status, or the exception that left it, and its allocations.
struct Outcome {
  absl::Status status;
  std::string exception;  // empty when none escaped
  int64_t peak = 0;       // the most bytes live at once, over what was live before
  bool limit_hit = false;
  bool clean() const { return exception.empty() && !limit_hit; }
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  os << "status " << o.status << ", peak " << o.peak << " bytes";
  if (!o.exception.empty()) os << ", exception escaped: " << o.exception;
  if (o.limit_hit) os << ", tried to allocate beyond the limit";
  return os;
}

// Runs `read` allowing it `limit` bytes beyond what is live now.
Outcome Guarded(int64_t limit, const std::function<absl::Status()>& read) {
  Outcome out;
  g_base = g_live.load();
  g_peak = g_live.load();
  g_limit_hit = false;
  g_limit = limit;
  try {
    out.status = read();
  } catch (const std::exception& e) {
    out.exception = e.what();
  } catch (...) {
    out.exception = "(not a std::exception)";
  }
  g_limit = -1;
  out.peak = g_peak.load() - g_base.load();
  out.limit_hit = g_limit_hit.load();
  return out;
}

// A stream that serves bytes in small reads and cannot seek, like a pipe.
class PipeLikeBuffer final : public std::streambuf {
 public:
  explicit PipeLikeBuffer(std::string data) : data_(std::move(data)) {}

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (pos_ >= data_.size()) return traits_type::eof();
    const size_t n = std::min<size_t>(4096, data_.size() - pos_);
    std::memcpy(chunk_, data_.data() + pos_, n);
    pos_ += n;
    setg(chunk_, chunk_, chunk_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string data_;
  size_t pos_ = 0;
  char chunk_[4096];
};

std::string LittleEndian(uint64_t v, int bytes) {
  std::string out(bytes, '\0');
  for (int i = 0; i < bytes; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

// Kaldi's binary int32: a size byte 4, then the value.
std::string KaldiInt(int32_t v) { return "\x04" + LittleEndian(static_cast<uint32_t>(v), 4); }

// A matrix header of `token` claiming rows x cols, followed by `data_bytes` bytes of data.
std::string KaldiMatrixHeader(const std::string& token, int32_t rows, int32_t cols,
                              size_t data_bytes) {
  return token + " " + KaldiInt(rows) + KaldiInt(cols) + std::string(data_bytes, '\x01');
}

absl::Status ReadKaldiMatrix(std::istream& is, bool binary = true) {
  KaldiReader reader(is, "test.ark", binary);
  return reader.FloatMatrix().status();
}

// ---- Kaldi ----

// The 2.2 KB file of the issue: final.mdl up to the first GMM's means, whose matrix header is
// changed to say 65536 x 32768 = 2^31 floats, then 2 KB of data.
TEST(HostileKaldi, MatrixHeaderBeyondTheFile) {
  TempDir dir;
  const std::string mdl = ReadFile(DataPath("kaldi-mono/final.mdl"));
  const size_t at = mdl.find("<MEANS_INVVARS> FM ");
  ASSERT_NE(at, std::string::npos);
  const size_t header = at + std::strlen("<MEANS_INVVARS> FM ");
  const std::string bytes =
      mdl.substr(0, header) + KaldiInt(65536) + KaldiInt(32768) + mdl.substr(header + 10, 2048);
  const std::string path = dir.file("hostile.mdl");
  WriteFile(path, bytes);
  const Outcome o = Guarded(64 * kMiB, [&] { return LoadModel(path).status(); });
  EXPECT_TRUE(o.clean()) << o;
  ASSERT_FALSE(o.status.ok());
  const std::string msg(o.status.message());
  EXPECT_NE(msg.find(absl::StrCat(path, ": byte ")), std::string::npos) << msg;
  EXPECT_NE(msg.find("65536 x 32768"), std::string::npos) << msg;
  EXPECT_LT(o.peak, 4 * kMiB) << o;
}

TEST(HostileKaldi, EveryMatrixKindChecksItsSizeAgainstTheBytesLeft) {
  for (const std::string token : {"FM", "DM"}) {
    std::istringstream is(KaldiMatrixHeader(token, 65536, 32768, 2048));
    const Outcome o = Guarded(64 * kMiB, [&] { return ReadKaldiMatrix(is); });
    EXPECT_TRUE(o.clean()) << token << ": " << o;
    EXPECT_FALSE(o.status.ok()) << token;
    EXPECT_NE(o.status.message().find("test.ark: byte "), std::string::npos) << o.status;
  }
  // Compressed: min, range, rows, cols, then the data.
  for (const std::string token : {"CM", "CM2", "CM3"}) {
    std::istringstream is(token + " " + std::string(8, '\0') + LittleEndian(65536, 4) +
                          LittleEndian(32768, 4) + std::string(2048, '\x01'));
    const Outcome o = Guarded(64 * kMiB, [&] { return ReadKaldiMatrix(is); });
    EXPECT_TRUE(o.clean()) << token << ": " << o;
    EXPECT_FALSE(o.status.ok()) << token;
    EXPECT_NE(o.status.message().find("test.ark: byte "), std::string::npos) << o.status;
  }
  // A negative size: refused as before.
  std::istringstream negative(KaldiMatrixHeader("FM", -1, 10, 64));
  EXPECT_FALSE(Guarded(kMiB, [&] { return ReadKaldiMatrix(negative); }).status.ok());
}

TEST(HostileKaldi, VectorLengthsBeyondTheBytesLeft) {
  for (const std::string token : {"FV", "DV"}) {
    std::istringstream is(token + " " + KaldiInt(1 << 28) + std::string(1024, '\0'));
    const Outcome o = Guarded(64 * kMiB, [&] {
      KaldiReader reader(is, "v.ark", true);
      return reader.FloatVector().status();
    });
    EXPECT_TRUE(o.clean()) << token << ": " << o;
    EXPECT_FALSE(o.status.ok()) << token;
    EXPECT_LT(o.peak, kMiB) << o;
  }
  std::istringstream ints("\x04" + LittleEndian(1 << 28, 4) + std::string(1024, '\0'));
  const Outcome o = Guarded(64 * kMiB, [&] {
    KaldiReader reader(ints, "v.ark", true);
    return reader.Int32Vector().status();
  });
  EXPECT_TRUE(o.clean()) << o;
  EXPECT_FALSE(o.status.ok());
  EXPECT_LT(o.peak, kMiB) << o;
}

// A pipe's size is unknown: the data is read in bounded chunks, so a lying header fails where the
// data ends, having allocated about what the data holds; a true one reads the same as from a file.
TEST(HostileKaldi, MatricesFromAPipeAreReadInBoundedChunks) {
  for (const std::string token : {"FM", "DM"}) {
    PipeLikeBuffer buffer(KaldiMatrixHeader(token, 65536, 32768, 3 << 20));
    std::istream is(&buffer);
    const Outcome o = Guarded(64 * kMiB, [&] { return ReadKaldiMatrix(is); });
    EXPECT_TRUE(o.clean()) << token << ": " << o;
    EXPECT_FALSE(o.status.ok()) << token;
    EXPECT_NE(o.status.message().find("ends inside"), std::string::npos) << o.status;
    EXPECT_LT(o.peak, 24 * kMiB) << token << ": " << o;
  }
  std::istringstream cm3("CM3 " + std::string(8, '\0') + LittleEndian(65536, 4) +
                         LittleEndian(32768, 4) + std::string(2048, '\x01'));
  PipeLikeBuffer cm3_buffer(cm3.str());
  std::istream cm3_pipe(&cm3_buffer);
  const Outcome o = Guarded(64 * kMiB, [&] { return ReadKaldiMatrix(cm3_pipe); });
  EXPECT_TRUE(o.clean()) << o;
  EXPECT_FALSE(o.status.ok());

  const Matrix m = RandomFeatures(700, 39, 0.0f, 1.0f, 3);
  std::ostringstream os;
  KaldiWriter writer(os, true);
  writer.FloatMatrix(m);
  PipeLikeBuffer buffer(os.str());
  std::istream pipe(&buffer);
  KaldiReader reader(pipe, "pipe", true);
  auto back = reader.FloatMatrix();
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, m);
}

TEST(HostileKaldi, TokensHaveABoundedLength) {
  std::istringstream is(std::string(100000, 'x') + " FM ");
  KaldiReader reader(is, "t.ark", true);
  auto token = reader.Token();
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.status().message().find("t.ark: byte "), std::string::npos) << token.status();
  std::istringstream text("[ 1 2 " + std::string(100000, '3') + " ]");
  KaldiReader text_reader(text, "t.txt", false);
  EXPECT_FALSE(text_reader.FloatVector().ok());
}

std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(HostileKaldi, TextTopologyPhoneIdsAreBounded) {
  const std::string mdl = ReadFile(DataPath("kaldi-mono/final.txt.mdl"));
  for (const std::string phone : {"2147483647", "1000000000", "1048577"}) {
    std::istringstream is(ReplaceFirst(mdl, "<ForPhones> \n2 ", "<ForPhones> \n" + phone + " "));
    const Outcome o =
        Guarded(64 * kMiB, [&] { return ReadKaldiModel(is, "final.txt.mdl").status(); });
    EXPECT_TRUE(o.clean()) << phone << ": " << o;
    ASSERT_FALSE(o.status.ok()) << phone;
    const std::string msg(o.status.message());
    EXPECT_NE(msg.find("final.txt.mdl: byte "), std::string::npos) << msg;
    EXPECT_NE(msg.find(absl::StrCat("phone ", phone)), std::string::npos) << msg;
  }
}

TEST(HostileKaldi, TransitionTuplesBeyondTheFile) {
  const std::string text = ReadFile(DataPath("kaldi-mono/final.txt.mdl"));
  std::istringstream is(ReplaceFirst(text, "<Triples> 56 ", "<Triples> 10000000 "));
  Outcome o = Guarded(64 * kMiB, [&] { return ReadKaldiModel(is, "final.txt.mdl").status(); });
  EXPECT_TRUE(o.clean()) << o;
  EXPECT_FALSE(o.status.ok());
  EXPECT_LT(o.peak, 16 * kMiB) << o;

  const std::string binary = ReadFile(DataPath("kaldi-mono/final.mdl"));
  std::istringstream bin(
      ReplaceFirst(binary, "<Triples> " + KaldiInt(56), "<Triples> " + KaldiInt(10000000)));
  o = Guarded(64 * kMiB, [&] { return ReadKaldiModel(bin, "final.mdl").status(); });
  EXPECT_TRUE(o.clean()) << o;
  EXPECT_FALSE(o.status.ok());
  EXPECT_NE(o.status.message().find("final.mdl: byte "), std::string::npos) << o.status;
  EXPECT_LT(o.peak, 16 * kMiB) << o;
}

// ---- Native ----

std::string NativeBytes(const GmmModel& model, const TempDir& dir) {
  const std::string path = dir.file("model.gmms");
  EXPECT_TRUE(SaveModel(model, path, ModelFormat::kNative).ok());
  return ReadFile(path);
}

TEST(HostileNative, PayloadSizeBeyondTheFileIsRefusedBeforeReading) {
  TempDir dir;
  std::string bytes = NativeBytes(RandomModel({}, 4), dir).substr(0, 64);
  bytes.replace(32, 8, LittleEndian(uint64_t{1} << 40, 8));  // payload bytes
  const std::string path = dir.file("hostile.gmms");
  WriteFile(path, bytes);
  const Outcome o = Guarded(64 * kMiB, [&] { return LoadModel(path).status(); });
  EXPECT_TRUE(o.clean()) << o;
  ASSERT_FALSE(o.status.ok());
  const std::string msg(o.status.message());
  EXPECT_NE(msg.find(absl::StrCat(path, ": byte 32: ")), std::string::npos) << msg;
  EXPECT_LT(o.peak, kMiB) << o;
}

TEST(HostileNative, HeaderCountsThatOverflowAreRefused) {
  TempDir dir;
  const std::string good = NativeBytes(RandomModel({}, 4), dir);
  const std::string path = dir.file("hostile.gmms");
  // Gaussians 2^62 (x 4 bytes overflows), 2^61 + 1, states 2^31 - 1, dimension 2^31 - 1.
  const std::vector<std::pair<size_t, std::string>> patches = {
      {24, LittleEndian(uint64_t{1} << 62, 8)},
      {24, LittleEndian((uint64_t{1} << 61) + 1, 8)},
      {20, LittleEndian(INT32_MAX, 4)},
      {16, LittleEndian(INT32_MAX, 4)},
  };
  for (const auto& [offset, value] : patches) {
    std::string bytes = good;
    bytes.replace(offset, value.size(), value);
    WriteFile(path, bytes);
    const Outcome o = Guarded(64 * kMiB, [&] { return LoadModel(path).status(); });
    EXPECT_TRUE(o.clean()) << "offset " << offset << ": " << o;
    ASSERT_FALSE(o.status.ok()) << "offset " << offset;
    EXPECT_NE(o.status.message().find(absl::StrCat(path, ": byte ")), std::string::npos)
        << o.status;
    EXPECT_LT(o.peak, 2 * static_cast<int64_t>(good.size()) + kMiB) << o;
  }
}

TEST(HostileNative, AWrongHeaderLengthIsCalledThat) {
  TempDir dir;
  std::string bytes = NativeBytes(RandomModel({}, 4), dir);
  bytes.replace(12, 4, LittleEndian(65, 4));
  const std::string path = dir.file("hostile.gmms");
  WriteFile(path, bytes);
  const auto r = ReadNativeModel(path);
  ASSERT_FALSE(r.ok());
  const std::string msg(r.status().message());
  EXPECT_NE(msg.find("byte 12: header length 65"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("unsupported version"), std::string::npos) << msg;
}

// ---- HTK ----

absl::Status ReadMmf(const std::string& text) {
  std::istringstream is(text);
  return ReadHtkModel(is, "hostile.mmf").status();
}

// A ~m macro of dimension 2000 (8 KB of text) used by 10,000 mixtures of a few bytes each would
// materialise 160 MB of means and variances from 260 KB.
TEST(HostileHtk, MacrosCannotAmplifyTheFileWithoutBound) {
  std::string mmf = "~o <VECSIZE> 2000 <DIAGC>\n~m \"big\"\n<MEAN> 2000\n";
  for (int i = 0; i < 2000; ++i) mmf += "0 ";
  mmf += "\n<VARIANCE> 2000\n";
  for (int i = 0; i < 2000; ++i) mmf += "1 ";
  mmf += "\n~s \"s\"\n<NUMMIXES> 10000\n";
  for (int i = 1; i <= 10000; ++i) absl::StrAppend(&mmf, "<MIXTURE> ", i, " 1e-4 ~m \"big\"\n");
  mmf +=
      "~h \"h\" <BEGINHMM> <NUMSTATES> 3 <STATE> 2 ~s \"s\" <TRANSP> 3\n0 1 0\n0 0.5 0.5\n0 0 0\n";
  mmf += "<ENDHMM>\n";
  const Outcome o = Guarded(64 * kMiB, [&] { return ReadMmf(mmf); });
  EXPECT_TRUE(o.clean()) << o;
  ASSERT_FALSE(o.status.ok());
  const std::string msg(o.status.message());
  EXPECT_NE(msg.find("hostile.mmf: line "), std::string::npos) << msg;
  EXPECT_NE(msg.find("values"), std::string::npos) << msg;
}

TEST(HostileHtk, CountsBeyondTheTextAreRefusedBeforeAllocating) {
  for (const std::string& mmf : {
           std::string("~o <VECSIZE> 1048576\n~u \"m\"\n<MEAN> 1048576\n 1 2 3\n"),
           std::string("~o <VECSIZE> 2\n~t \"t\"\n<TRANSP> 1000\n 0 1 0\n"),
       }) {
    const Outcome o = Guarded(kMiB, [&] { return ReadMmf(mmf); });
    EXPECT_TRUE(o.clean()) << o;
    ASSERT_FALSE(o.status.ok());
    EXPECT_NE(o.status.message().find("hostile.mmf: line "), std::string::npos) << o.status;
  }
}

// ---- Sphinx ----

TEST(HostileSphinx, DimensionProductsThatOverflowAreRefused) {
  TempDir dir;
  const std::string model = dir.file("model/");
  ASSERT_TRUE(SaveModel(RandomModel({.num_states = 3}, 2), model, ModelFormat::kSphinx).ok());
  // 2^30 codebooks x 2^30 densities x 16 = 2^64 values: 0 once wrapped, which the count matches.
  const std::string means = dir.file("model/means");
  WriteWholeFile(means, S3Bytes({1 << 30, 1, 1 << 30, 16}, {})).IgnoreError();
  WriteWholeFile(dir.file("model/variances"), S3Bytes({1 << 30, 1, 1 << 30, 16}, {})).IgnoreError();
  const Outcome o = Guarded(64 * kMiB, [&] { return ReadSphinxModel(model).status(); });
  EXPECT_TRUE(o.clean()) << o;
  ASSERT_FALSE(o.status.ok());
  EXPECT_NE(o.status.message().find(absl::StrCat(means, ": byte ")), std::string::npos) << o.status;

  // A matrix of 2^31 - 1 source states: one more destination state overflows int32.
  ASSERT_TRUE(SaveModel(RandomModel({.num_states = 3}, 2), model, ModelFormat::kSphinx).ok());
  const std::string tmats = dir.file("model/transition_matrices");
  WriteWholeFile(tmats, S3Bytes({1, INT32_MAX, INT32_MIN}, {})).IgnoreError();
  const Outcome t = Guarded(64 * kMiB, [&] { return ReadSphinxModel(model).status(); });
  EXPECT_TRUE(t.clean()) << t;
  ASSERT_FALSE(t.status.ok());
  EXPECT_NE(t.status.message().find(absl::StrCat(tmats, ": byte ")), std::string::npos) << t.status;
}

// ---- No exception leaves a reader ----

// An allocation that fails anyway (a real file larger than the machine) is RESOURCE_EXHAUSTED.
TEST(HostileFiles, AFailedAllocationIsAStatus) {
  const std::string mdl = DataPath("kaldi-mono/final.mdl");
  const Outcome o = Guarded(64 << 10, [&] { return LoadModel(mdl).status(); });
  EXPECT_TRUE(o.exception.empty()) << o;
  EXPECT_EQ(o.status.code(), absl::StatusCode::kResourceExhausted) << o;
  EXPECT_NE(o.status.message().find(mdl), std::string::npos) << o.status;

  const Matrix m = RandomFeatures(2000, 39, 0.0f, 1.0f, 1);
  std::ostringstream htk, sphinx;
  ASSERT_TRUE(WriteHtkFeatures(m, htk).ok());
  ASSERT_TRUE(WriteSphinxFeatures(m, sphinx).ok());
  std::istringstream htk_in(htk.str()), sphinx_in(sphinx.str());
  const Outcome h = Guarded(64 << 10, [&] { return ReadHtkFeatures(htk_in, "f.htk").status(); });
  EXPECT_TRUE(h.exception.empty()) << h;
  EXPECT_EQ(h.status.code(), absl::StatusCode::kResourceExhausted) << h;
  const Outcome s =
      Guarded(64 << 10, [&] { return ReadSphinxFeatures(sphinx_in, "f.mfc", 39).status(); });
  EXPECT_TRUE(s.exception.empty()) << s;
  EXPECT_EQ(s.status.code(), absl::StatusCode::kResourceExhausted) << s;
}

// ---- Mutation fuzzing ----

// A small HTK MMF with every kind of macro, so that mutations reach all of the parser.
constexpr char kMacroMmf[] = R"(~o
<STREAMINFO> 1 3
<VECSIZE> 3<NULLD><MFCC><DIAGC>
~v "var"
<VARIANCE> 3
 1.0 2.0 0.5
~u "mu"
<MEAN> 3
 0.1 -0.2 0.3
~m "mix"
~u "mu"
~v "var"
~t "tp"
<TRANSP> 4
 0.0 1.0 0.0 0.0
 0.0 0.6 0.4 0.0
 0.0 0.0 0.7 0.3
 0.0 0.0 0.0 0.0
~s "shared"
<NUMMIXES> 3
<MIXTURE> 1 0.5
~m "mix"
<MIXTURE> 2 0.25
<MEAN> 3
 1 2 3
~v "var"
<MIXTURE> 3 0.25
<RCLASS> 2
<MEAN> 3
 -1 -2 -3
<VARIANCE> 3
 4 5 6
<GCONST> 1.5
~h "a"
<BEGINHMM>
<NUMSTATES> 4
<STATE> 2
~s "shared"
<STATE> 3
<SWEIGHTS> 1 1.0
<STREAM> 1
<MEAN> 3
 0 0 0
<VARIANCE> 3
 1 1 1
~t "tp"
<ENDHMM>
~h "b"
<BEGINHMM>
<NUMSTATES> 3
<STATE> 2
~s "shared"
<TRANSP> 3
 0 1 0
 0 0.5 0.5
 0 0 0
<ENDHMM>
)";

// Writes a new file: truncating one that has data can cost a flush on ext4 (auto_da_alloc).
void WriteNewFile(const std::string& path, const std::string& bytes) {
  std::filesystem::remove(path);
  WriteFile(path, bytes);
}

// One input to mutate: its bytes and how to load them (from `path`, where they have been written).
struct FuzzInput {
  std::string name;
  std::string bytes;
  bool text = false;  // mutate its numbers too
  std::function<absl::Status(const std::string& path)> load;
};

// The outcome of a batch, written by the child that ran it.
struct BatchReport {
  int64_t tried = 0;
  int64_t ok = 0;
  int64_t errors = 0;
  int64_t failures = 0;  // exceptions or allocations beyond the bound
  int64_t current = -1;  // the mutation being loaded, for a crash report
  char first_failure[1024] = {};
};

// Positions of the numbers in a text: [begin, end) of each run of [-+.0-9eE] starting with a
// digit or sign.
std::vector<std::pair<size_t, size_t>> NumberSpans(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
      size_t end = i + 1;
      while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) ||
                                   std::strchr("+-.eE", text[end]) != nullptr)) {
        ++end;
      }
      spans.emplace_back(i, end);
      i = end;
    } else {
      ++i;
    }
  }
  return spans;
}

// The positions just after a Kaldi binary size byte 4: 4-byte fields, int32 or float.
std::vector<size_t> KaldiFieldOffsets(const std::string& bytes) {
  std::vector<size_t> at;
  for (size_t i = 0; i + 5 <= bytes.size(); ++i) {
    if (bytes[i] == '\x04') at.push_back(i + 1);
  }
  return at;
}

// One seeded mutation of `b`; `what` says which, for the report. `numbers` and `fields` are
// positions in the input before any mutation.
std::string Mutate(std::string b, bool text, std::mt19937_64& rng, std::string* what,
                   const std::vector<std::pair<size_t, size_t>>& numbers,
                   const std::vector<size_t>& fields) {
  static const uint64_t kLarge[] = {0x7fffffffu,
                                    0x80000000u,
                                    0xffffffffu,
                                    0x40000000u,
                                    0x10000000u,
                                    0x01000000u,
                                    0x00100000u,
                                    65536,
                                    0,
                                    uint64_t{1} << 40,
                                    uint64_t{1} << 62,
                                    uint64_t{1} << 63,
                                    ~uint64_t{0},
                                    0x7fffffffffffffffu};
  static const char* kTextNumbers[] = {
      "2147483647", "2147483648", "-2147483648", "4294967295", "1000000000", "99999999999999999999",
      "1e38",       "-1",         "0",           "nan",        "inf",        "1048576",
      "65536",      "100000"};
  const auto pick = [&](uint64_t n) { return n == 0 ? 0 : rng() % n; };
  const int kind = static_cast<int>(pick(5));
  if (b.empty()) return b;
  switch (kind) {
    case 0: {  // bit flips
      const int flips = 1 + static_cast<int>(pick(8));
      *what = absl::StrCat(flips, " bit flips");
      for (int i = 0; i < flips; ++i) b[pick(b.size())] ^= static_cast<char>(1 << pick(8));
      break;
    }
    case 1: {  // truncation
      const size_t at = pick(b.size());
      *what = absl::StrCat("truncated at ", at);
      b.resize(at);
      break;
    }
    case 2:
    case 3: {  // a large integer over a 4- or 8-byte field
      const int width = pick(3) == 0 ? 8 : 4;
      uint64_t value = pick(4) == 0 ? rng() : kLarge[pick(std::size(kLarge))];
      if (pick(4) == 0) value += pick(3) - 1;
      size_t at = 0;
      if (!fields.empty() && pick(2) == 0) {
        at = fields[pick(fields.size())];
      } else if (b.size() > 64 && pick(2) == 0) {
        at = pick(64) & ~size_t{3};  // headers
      } else {
        at = pick(b.size());
      }
      at = std::min(at, b.size() > size_t(width) ? b.size() - width : 0);
      *what = absl::StrCat(width, "-byte ", value, " at ", at);
      const std::string v = LittleEndian(value, width);
      b.replace(at, std::min<size_t>(width, b.size() - at), v.substr(0, b.size() - at));
      break;
    }
    default: {  // text: a number replaced; binary: a run of bytes duplicated
      const auto [begin, end] =
          numbers.empty() ? std::pair<size_t, size_t>{} : numbers[pick(numbers.size())];
      if (text && end > begin && end <= b.size()) {
        const std::string value = kTextNumbers[pick(std::size(kTextNumbers))];
        *what = absl::StrCat("number at ", begin, " replaced by ", value);
        b.replace(begin, end - begin, value);
      } else {
        const size_t at = pick(b.size());
        const size_t n = std::min<size_t>(1 + pick(256), b.size() - at);
        *what = absl::StrCat(n, " bytes at ", at, " duplicated");
        b.insert(at, b.substr(at, n));
      }
      break;
    }
  }
  return b;
}

// Runs `count` mutations of `in` in a child process; the report comes back through shared memory
// so that a crash still says which mutation it was.
BatchReport RunBatch(const FuzzInput& in, int count, uint64_t seed, const std::string& path) {
  void* shared =
      mmap(nullptr, sizeof(BatchReport), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(shared, MAP_FAILED);
  auto* report = new (shared) BatchReport();
  const pid_t pid = fork();
  if (pid == 0) {
    std::mt19937_64 rng(seed);
    const std::vector<std::pair<size_t, size_t>> numbers =
        in.text ? NumberSpans(in.bytes) : std::vector<std::pair<size_t, size_t>>{};
    const std::vector<size_t> fields =
        in.text ? std::vector<size_t>{} : KaldiFieldOffsets(in.bytes);
    for (int i = 0; i < count; ++i) {
      // One mutation, or two in one case of four.
      std::string what, second;
      std::string bytes = Mutate(in.bytes, in.text, rng, &what, numbers, fields);
      if (rng() % 4 == 0) {
        bytes = Mutate(std::move(bytes), in.text, rng, &second, numbers, fields);
        absl::StrAppend(&what, ", then ", second);
      }
      WriteNewFile(path, bytes);
      report->current = i;
      const Outcome o =
          Guarded(static_cast<int64_t>(bytes.size()) + 64 * kMiB, [&] { return in.load(path); });
      ++report->tried;
      if (!o.clean()) {
        if (report->failures++ == 0) {
          const std::string msg =
              absl::StrCat(in.name, " mutation ", i, " (", what, "): ", absl::StrCat(o.peak),
                           " bytes peak", o.limit_hit ? ", beyond the bound" : "",
                           o.exception.empty() ? "" : ", exception: ", o.exception);
          std::snprintf(report->first_failure, sizeof(report->first_failure), "%s", msg.c_str());
        }
      } else if (o.status.ok()) {
        ++report->ok;
      } else {
        ++report->errors;
      }
    }
    report->current = -1;
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  BatchReport out = *report;
  munmap(shared, sizeof(BatchReport));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << in.name << ": the child died (status " << status << ") at mutation "
                  << out.current << " of seed " << seed;
  }
  return out;
}

absl::Status ReadAllMatrices(const std::string& rspecifier) {
  auto reader = MatrixTableReader::Open(rspecifier);
  if (!reader.ok()) return reader.status();
  std::string key;
  Matrix m;
  while (true) {
    auto more = (*reader)->Next(&key, &m);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
  }
}

absl::Status ReadStream(const std::string& path,
                        const std::function<absl::Status(std::istream&)>& read) {
  std::ifstream is(path, std::ios::binary);
  return read(is);
}

TEST(HostileFiles, MutationsEndInAStatus) {
  TempDir dir;
  const auto started = std::chrono::steady_clock::now();
  auto kaldi = LoadModel(DataPath("kaldi-mono/final.mdl"));
  ASSERT_TRUE(kaldi.ok()) << kaldi.status();
  const std::string native_path = dir.file("model.gmms");
  ASSERT_TRUE(SaveModel(kaldi->model, native_path, ModelFormat::kNative).ok());
  const GmmModel small = RandomModel({.num_states = 4, .dim = 5, .max_gauss = 3}, 9);
  const std::string small_mmf = dir.file("small.mmf");
  ASSERT_TRUE(SaveModel(small, small_mmf, ModelFormat::kHtk).ok());
  // Kaldi models with the real transition model and small random GMMs, binary and text, so
  // that a load takes a fraction of a millisecond.
  GmmModelSpec small_kaldi_spec =
      RandomModel({.num_states = kaldi->model.num_states(), .dim = 3, .max_gauss = 2}, 5).spec();
  small_kaldi_spec.hmm = kaldi->model.hmm();
  auto small_kaldi = GmmModel::Create(small_kaldi_spec);
  ASSERT_TRUE(small_kaldi.ok()) << small_kaldi.status();
  const std::string small_mdl = dir.file("small.mdl"), small_text_mdl = dir.file("small.txt.mdl");
  ASSERT_TRUE(SaveModel(*small_kaldi, small_mdl, ModelFormat::kKaldiBinary).ok());
  ASSERT_TRUE(SaveModel(*small_kaldi, small_text_mdl, ModelFormat::kKaldiText).ok());
  const std::string features = ReadFile(DataPath("kaldi-mono/feats.ark"));
  Matrix utterance;
  {
    std::istringstream is(features);
    is.ignore(1 << 20, ' ');
    KaldiReader::ConsumeBinaryMarker(is);
    KaldiReader reader(is, "feats.ark", true);
    auto m = reader.FloatMatrix();
    ASSERT_TRUE(m.ok()) << m.status();
    utterance = *std::move(m);
  }
  std::ostringstream htk_features, sphinx_features;
  ASSERT_TRUE(WriteHtkFeatures(utterance, htk_features).ok());
  ASSERT_TRUE(WriteSphinxFeatures(utterance, sphinx_features).ok());
  // The first two utterances of feats.ark, so that archives are quick to read.
  const std::string two_utterances = [&] {
    std::istringstream is(features);
    for (int i = 0; i < 2; ++i) {
      is.ignore(1 << 20, ' ');
      KaldiReader::ConsumeBinaryMarker(is);
      KaldiReader reader(is, "feats.ark", true);
      EXPECT_TRUE(reader.FloatMatrix().ok());
    }
    return features.substr(0, static_cast<size_t>(is.tellg()));
  }();

  const auto model_loader = [](const std::string& path) { return LoadModel(path).status(); };
  std::vector<FuzzInput> inputs = {
      {"final.mdl", ReadFile(DataPath("kaldi-mono/final.mdl")), false, model_loader},
      {"small.mdl", ReadFile(small_mdl), false, model_loader},
      {"small.txt.mdl", ReadFile(small_text_mdl), true, model_loader},
      {"native", ReadFile(native_path), false, model_loader},
      {"htk macros", kMacroMmf, true, model_loader},
      {"htk written", ReadFile(small_mmf), true, model_loader},
      {"feats.ark", two_utterances, false,
       [](const std::string& path) { return ReadAllMatrices("ark:" + path); }},
      {"htk features", htk_features.str(), false,
       [](const std::string& path) {
         return ReadStream(path,
                           [&](std::istream& is) { return ReadHtkFeatures(is, path).status(); });
       }},
      {"sphinx features", sphinx_features.str(), false,
       [](const std::string& path) {
         return ReadStream(
             path, [&](std::istream& is) { return ReadSphinxFeatures(is, path, 39).status(); });
       }},
  };
  // The Sphinx model: each of its files mutated in turn, the others left as they are.
  const std::string sphinx_dir = dir.file("sphinx/");
  ASSERT_TRUE(SaveModel(RandomModel({.num_states = 6, .dim = 4, .max_gauss = 4}, 3), sphinx_dir,
                        ModelFormat::kSphinx)
                  .ok());
  for (const char* file :
       {"means", "variances", "mixture_weights", "transition_matrices", "mdef"}) {
    const std::string original = ReadFile(sphinx_dir + file);
    inputs.push_back({absl::StrCat("sphinx ", file), original, std::string(file) == "mdef",
                      [sphinx_dir, file, original](const std::string& path) {
                        WriteNewFile(sphinx_dir + file, ReadFile(path));
                        const absl::Status s = ReadSphinxModel(sphinx_dir).status();
                        WriteNewFile(sphinx_dir + file, original);
                        return s;
                      }});
  }

  // Mutations per input, by how long a load takes.
  const std::map<std::string, int> counts = {};
  int64_t tried = 0, errors = 0, ok = 0;
  uint64_t seed = 1;
  for (const FuzzInput& in : inputs) {
    const auto it = counts.find(in.name);
    const int count = it == counts.end() ? 5000 : it->second;
    const auto batch_started = std::chrono::steady_clock::now();
    const BatchReport r = RunBatch(in, count, seed++, dir.file("mutated"));
    const double batch_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - batch_started).count();
    EXPECT_EQ(r.failures, 0) << r.first_failure;
    EXPECT_EQ(r.tried, count) << in.name;
    tried += r.tried;
    errors += r.errors;
    ok += r.ok;
    std::cout << "[ mutations ] " << in.name << ": " << r.tried << " tried, " << r.errors
              << " errors, " << r.ok << " loaded, " << batch_seconds << " s\n";
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "[ mutations ] " << tried << " tried, " << errors << " errors, " << ok
            << " loaded, in " << seconds << " s\n";
}

}  // namespace
}  // namespace gmmscore
