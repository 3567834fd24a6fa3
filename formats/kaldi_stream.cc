#include "formats/kaldi_stream.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <streambuf>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

constexpr size_t kPipeBufferBytes = 1 << 16;

// How a command run through popen ended, as pclose reports it.
absl::Status CommandStatus(const std::string& command, int status) {
  if (status == -1) {
    return absl::InternalError(
        absl::StrCat("command '", command, "': cannot wait for it: ", std::strerror(errno)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return absl::OkStatus();
  if (WIFSIGNALED(status)) {
    return absl::DataLossError(absl::StrCat("command '", command, "' was killed by signal ",
                                            WTERMSIG(status), " (", strsignal(WTERMSIG(status)),
                                            ")"));
  }
  return absl::DataLossError(
      absl::StrCat("command '", command, "' exited with status ", WEXITSTATUS(status)));
}

// Holds SIGPIPE blocked in this thread while writing to a pipe, so that writing to a command that
// has exited fails with EPIPE instead of ending the process; a SIGPIPE the write raised is taken
// off the pending signals before the old mask comes back.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&sigpipe_);
    sigaddset(&sigpipe_, SIGPIPE);
    was_pending_ = Pending();
    pthread_sigmask(SIG_BLOCK, &sigpipe_, &old_mask_);
  }
  ~SigpipeBlocked() {
    if (!was_pending_ && Pending()) {
      const timespec now{};
      sigtimedwait(&sigpipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  static bool Pending() {
    sigset_t pending;
    sigpending(&pending);
    return sigismember(&pending, SIGPIPE) == 1;
  }
  sigset_t sigpipe_;
  sigset_t old_mask_;
  bool was_pending_ = false;
};

// The read end of a pipe, buffered; one character before the buffer is kept so that the last
// character read can always be put back.
class PipeReadBuffer final : public std::streambuf {
 public:
  explicit PipeReadBuffer(int fd) : fd_(fd) { setg(buffer_ + 1, buffer_ + 1, buffer_ + 1); }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const bool keep = gptr() > eback();
    if (keep) buffer_[0] = gptr()[-1];
    ssize_t n;
    do {
      n = ::read(fd_, buffer_ + 1, sizeof(buffer_) - 1);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) return traits_type::eof();
    setg(keep ? buffer_ : buffer_ + 1, buffer_ + 1, buffer_ + 1 + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  int fd_;
  char buffer_[kPipeBufferBytes + 1];
};

// The write end of a pipe, buffered; each write(2) holds SIGPIPE blocked.
class PipeWriteBuffer final : public std::streambuf {
 public:
  explicit PipeWriteBuffer(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof(buffer_)); }

 protected:
  int_type overflow(int_type c) override {
    if (!Drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return Drain() ? 0 : -1; }

 private:
  bool Drain() {
    SigpipeBlocked blocked;
    bool ok = true;
    for (const char* p = pbase(); ok && p < pptr();) {
      const ssize_t n = ::write(fd_, p, size_t(pptr() - p));
      if (n >= 0)
        p += n;
      else
        ok = errno == EINTR;
    }
    setp(buffer_, buffer_ + sizeof(buffer_));  // what could not be written is dropped
    return ok;
  }
  int fd_;
  char buffer_[kPipeBufferBytes];
};

class StdinInput final : public InputStream {
 public:
  StdinInput() : InputStream(Rxfilename{}, "stdin") {}
  std::istream& stream() override { return std::cin; }
  absl::Status Close() override { return absl::OkStatus(); }
};

class FileInput final : public InputStream {
 public:
  explicit FileInput(const Rxfilename& source)
      : InputStream(source, source.target), file_(source.target, std::ios::binary) {}
  std::istream& stream() override { return file_; }
  absl::Status Close() override {
    file_.close();
    return absl::OkStatus();
  }

 private:
  std::ifstream file_;
};

class PipeInput final : public InputStream {
 public:
  PipeInput(const Rxfilename& source, FILE* pipe)
      : InputStream(source, absl::StrCat("'", source.target, " |'")),
        pipe_(pipe),
        buffer_(std::make_unique<PipeReadBuffer>(fileno(pipe))),
        stream_(buffer_.get()) {}
  ~PipeInput() override {
    if (pipe_ != nullptr) pclose(pipe_);
  }
  std::istream& stream() override { return stream_; }
  absl::Status Close() override {
    if (pipe_ == nullptr) return absl::OkStatus();
    stream_.rdbuf(nullptr);
    buffer_.reset();
    const int status = pclose(pipe_);
    pipe_ = nullptr;
    return CommandStatus(source().target, status);
  }

 private:
  FILE* pipe_;
  std::unique_ptr<PipeReadBuffer> buffer_;
  std::istream stream_;
};

class StdoutOutput final : public OutputStream {
 public:
  StdoutOutput() : OutputStream("stdout", false) {}
  std::ostream& stream() override { return std::cout; }
  absl::Status Close() override {
    std::cout.flush();
    if (!std::cout) return absl::DataLossError("stdout: write failed");
    return absl::OkStatus();
  }
};

class FileOutput final : public OutputStream {
 public:
  explicit FileOutput(const std::string& path)
      : OutputStream(path, true), file_(path, std::ios::binary | std::ios::trunc) {}
  bool is_open() const { return file_.is_open(); }
  std::ostream& stream() override { return file_; }
  absl::Status Close() override {
    if (!file_.is_open()) return absl::OkStatus();
    file_.close();
    if (!file_) return absl::DataLossError(absl::StrCat(name(), ": write failed"));
    return absl::OkStatus();
  }

 private:
  std::ofstream file_;
};

class PipeOutput final : public OutputStream {
 public:
  PipeOutput(std::string command, FILE* pipe)
      : OutputStream(absl::StrCat("'| ", command, "'"), false),
        command_(std::move(command)),
        pipe_(pipe),
        buffer_(std::make_unique<PipeWriteBuffer>(fileno(pipe))),
        stream_(buffer_.get()) {}
  ~PipeOutput() override {
    if (pipe_ == nullptr) return;
    stream_.flush();
    pclose(pipe_);
  }
  std::ostream& stream() override { return stream_; }
  absl::Status Close() override {
    if (pipe_ == nullptr) return absl::OkStatus();
    const bool written = static_cast<bool>(stream_.flush());
    stream_.rdbuf(nullptr);
    buffer_.reset();
    const int status = pclose(pipe_);
    pipe_ = nullptr;
    absl::Status command = CommandStatus(command_, status);
    if (!command.ok()) return command;
    if (!written) return absl::DataLossError(absl::StrCat(name(), ": write failed"));
    return absl::OkStatus();
  }

 private:
  std::string command_;
  FILE* pipe_;
  std::unique_ptr<PipeWriteBuffer> buffer_;
  std::ostream stream_;
};

}  // namespace

absl::StatusOr<Rxfilename> ParseRxfilename(const std::string& rxfilename) {
  Rxfilename rx;
  if (rxfilename.empty() || rxfilename == "-") return rx;
  if (rxfilename.front() == '|') {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", rxfilename, "' is an output pipe; to read from a command, end it with '|'"));
  }
  if (rxfilename.back() == '|') {
    rx.kind = Rxfilename::Kind::kPipe;
    rx.target = std::string(absl::StripTrailingAsciiWhitespace(
        absl::string_view(rxfilename).substr(0, rxfilename.size() - 1)));
    return rx;
  }
  rx.kind = Rxfilename::Kind::kFile;
  rx.target = rxfilename;
  const auto colon = rxfilename.rfind(':');
  if (colon != std::string::npos && colon > 0 && colon + 1 < rxfilename.size() &&
      absl::c_all_of(rxfilename.substr(colon + 1), absl::ascii_isdigit)) {
    if (!absl::SimpleAtoi(rxfilename.substr(colon + 1), &rx.offset)) {
      return absl::InvalidArgumentError(absl::StrCat("'", rxfilename, "': bad byte offset"));
    }
    rx.target.resize(colon);
  }
  return rx;
}

absl::Status InputStream::Seek(int64_t offset) {
  if (source_.kind != Rxfilename::Kind::kFile) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": cannot seek"));
  }
  stream().clear();
  stream().seekg(offset);
  if (!stream()) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": cannot seek to byte ", offset));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<InputStream>> InputStream::Open(const std::string& rxfilename) {
  absl::StatusOr<Rxfilename> source = ParseRxfilename(rxfilename);
  if (!source.ok()) return source.status();
  return Open(*source);
}

absl::StatusOr<std::unique_ptr<InputStream>> InputStream::Open(const Rxfilename& source) {
  switch (source.kind) {
    case Rxfilename::Kind::kStdin:
      return std::make_unique<StdinInput>();
    case Rxfilename::Kind::kPipe: {
      // "e": close-on-exec, so that commands started later do not hold this pipe open.
      FILE* pipe = popen(source.target.c_str(), "re");
      if (pipe == nullptr) {
        return absl::InternalError(
            absl::StrCat("cannot run command '", source.target, "': ", std::strerror(errno)));
      }
      return std::make_unique<PipeInput>(source, pipe);
    }
    case Rxfilename::Kind::kFile:
      break;
  }
  auto file = std::make_unique<FileInput>(source);
  if (!file->stream()) {
    return absl::NotFoundError(absl::StrCat(source.target, ": cannot open for reading"));
  }
  if (source.offset != 0) {
    if (absl::Status s = file->Seek(source.offset); !s.ok()) return s;
  }
  return file;
}

absl::StatusOr<std::unique_ptr<OutputStream>> OutputStream::Open(const std::string& wxfilename) {
  if (wxfilename.empty() || wxfilename == "-") return std::make_unique<StdoutOutput>();
  if (wxfilename.front() == '|') {
    const std::string command(absl::StripLeadingAsciiWhitespace(wxfilename.substr(1)));
    FILE* pipe = popen(command.c_str(), "we");
    if (pipe == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot run command '", command, "': ", std::strerror(errno)));
    }
    return std::make_unique<PipeOutput>(command, pipe);
  }
  if (wxfilename.back() == '|') {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", wxfilename, "' is an input pipe; to write to a command, start it with '|'"));
  }
  auto file = std::make_unique<FileOutput>(wxfilename);
  if (!file->is_open()) {
    return absl::PermissionDeniedError(absl::StrCat(wxfilename, ": cannot open for writing"));
  }
  return file;
}

}  // namespace gmmscore
