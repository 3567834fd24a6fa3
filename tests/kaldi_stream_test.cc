// Kaldi's extended filenames: files with offsets, pipes both ways, and commands that fail.
#include "formats/kaldi_stream.h"

#include <gtest/gtest.h>

#include <iterator>

#include "tests/test_util.h"

namespace gmmscore {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

std::string ReadAll(InputStream& input) {
  return std::string(std::istreambuf_iterator<char>(input.stream()), {});
}

TEST(Rxfilename, ClassifiesAsKaldiDoes) {
  EXPECT_EQ(ParseRxfilename("-")->kind, Rxfilename::Kind::kStdin);
  EXPECT_EQ(ParseRxfilename("")->kind, Rxfilename::Kind::kStdin);
  const auto pipe = ParseRxfilename("gunzip -c fsts.1.gz |");
  ASSERT_TRUE(pipe.ok());
  EXPECT_EQ(pipe->kind, Rxfilename::Kind::kPipe);
  EXPECT_EQ(pipe->target, "gunzip -c fsts.1.gz");
  const auto offset = ParseRxfilename("data/feats.ark:4314328");
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(offset->kind, Rxfilename::Kind::kFile);
  EXPECT_EQ(offset->target, "data/feats.ark");
  EXPECT_EQ(offset->offset, 4314328);
  EXPECT_EQ(ParseRxfilename("a:b.ark")->target, "a:b.ark");
  EXPECT_EQ(ParseRxfilename("| gzip -c >x.gz").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(InputStream, ReadsFilesFromAnOffsetAndCommandsOutput) {
  TempDir dir;
  WriteFile(dir.file("f"), "0123456789");
  auto file = InputStream::Open(dir.file("f") + ":4");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(ReadAll(**file), "456789");
  ASSERT_TRUE((*file)->Seek(8).ok());
  EXPECT_EQ(ReadAll(**file), "89");

  auto pipe = InputStream::Open("printf 'a\\0b' |");
  ASSERT_TRUE(pipe.ok()) << pipe.status();
  EXPECT_EQ((*pipe)->name(), "'printf 'a\\0b' |'");
  EXPECT_EQ(ReadAll(**pipe), std::string("a\0b", 3));
  EXPECT_TRUE((*pipe)->Close().ok());
  EXPECT_FALSE((*pipe)->Seek(0).ok());

  EXPECT_EQ(InputStream::Open(dir.file("missing")).status().code(), absl::StatusCode::kNotFound);
}

TEST(InputStream, LongOutputAndPutBackAcrossBuffers) {
  // More than one buffer of the pipe's (64 KiB): every byte arrives, and the last character read
  // can always be put back, refills included.
  auto pipe = InputStream::Open("head -c 200000 /dev/zero | tr '\\0' x |");
  ASSERT_TRUE(pipe.ok()) << pipe.status();
  std::istream& is = (*pipe)->stream();
  size_t n = 0;
  for (int c = is.get(); c != EOF; c = is.get(), ++n) {
    ASSERT_EQ(c, 'x') << n;
    ASSERT_TRUE(is.unget()) << n;
    ASSERT_EQ(is.get(), 'x') << n;
  }
  EXPECT_EQ(n, 200000u);
  EXPECT_TRUE((*pipe)->Close().ok());
}

TEST(InputStream, ACommandThatFailsIsReportedByNameWhenClosed) {
  auto failed = InputStream::Open("echo partial; exit 3 |");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(ReadAll(**failed), "partial\n");
  const absl::Status status = (*failed)->Close();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(), "command 'echo partial; exit 3' exited with status 3");

  auto killed = InputStream::Open("kill -9 $$ |");
  ASSERT_TRUE(killed.ok());
  ReadAll(**killed);
  const std::string message((*killed)->Close().message());
  EXPECT_NE(message.find("command 'kill -9 $$' was killed by signal 9"), std::string::npos)
      << message;
}

TEST(OutputStream, WritesFilesAndCommandsInput) {
  TempDir dir;
  auto file = OutputStream::Open(dir.file("f"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE((*file)->is_file());
  (*file)->stream() << "to a file";
  EXPECT_TRUE((*file)->Close().ok());
  EXPECT_EQ(ReadFile(dir.file("f")), "to a file");

  auto pipe = OutputStream::Open("| gzip -c >" + dir.file("f.gz"));
  ASSERT_TRUE(pipe.ok()) << pipe.status();
  EXPECT_FALSE((*pipe)->is_file());
  EXPECT_EQ((*pipe)->name(), "'| gzip -c >" + dir.file("f.gz") + "'");
  const std::string big(300000, 'y');
  (*pipe)->stream() << big;
  EXPECT_TRUE((*pipe)->Close().ok());
  auto back = InputStream::Open("gunzip -c " + dir.file("f.gz") + " |");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(ReadAll(**back), big);

  EXPECT_EQ(OutputStream::Open("gzip -c |").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OutputStream::Open(dir.file("no/such/dir")).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST(OutputStream, ACommandThatFailsOrStopsReadingIsAnErrorNotTheEndOfTheProcess) {
  auto failed = OutputStream::Open("| cat >/dev/null; exit 2");
  ASSERT_TRUE(failed.ok());
  (*failed)->stream() << "data";
  const absl::Status status = (*failed)->Close();
  EXPECT_EQ(status.message(), "command 'cat >/dev/null; exit 2' exited with status 2");

  // "true" reads nothing and exits: a megabyte cannot be written (EPIPE, no SIGPIPE death).
  auto gone = OutputStream::Open("| true");
  ASSERT_TRUE(gone.ok());
  (*gone)->stream() << std::string(1 << 20, 'z');
  const absl::Status write = (*gone)->Close();
  EXPECT_EQ(write.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(write.message(), "'| true': write failed");
}

}  // namespace
}  // namespace gmmscore
