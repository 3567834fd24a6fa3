// Where a table's bytes come from and go to: Kaldi's extended filenames (util/kaldi-io.h).
//
//   rxfilename (reading)   "-" or ""    standard input
//                          "CMD |"      the standard output of CMD, run by /bin/sh (popen)
//                          "FILE:N"     FILE from byte N (what ark,scp scripts point at)
//                          "FILE"       a file
//   wxfilename (writing)   "-" or ""    standard output
//                          "| CMD"      the standard input of CMD, run by /bin/sh
//                          "FILE"       a file, truncated
//
// Close() waits for a pipe's command and fails, naming the command, when it exited with a
// non-zero status or was killed by a signal; destroying a stream that was not closed closes it
// without looking. Writing to a command that has already exited is a write error, not the end of
// the process: the writes to a pipe hold SIGPIPE blocked in the writing thread.
#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"

namespace gmmscore {

struct Rxfilename {
  enum class Kind { kStdin, kPipe, kFile };
  Kind kind = Kind::kStdin;
  std::string target;  // kFile: the path; kPipe: the command, without its '|' and the spaces
  int64_t offset = 0;  // kFile: the byte where reading starts
};

absl::StatusOr<Rxfilename> ParseRxfilename(const std::string& rxfilename);

class InputStream {
 public:
  static absl::StatusOr<std::unique_ptr<InputStream>> Open(const std::string& rxfilename);
  static absl::StatusOr<std::unique_ptr<InputStream>> Open(const Rxfilename& source);
  virtual ~InputStream() = default;

  virtual std::istream& stream() = 0;
  // Ends the input: for a pipe, waits for the command and reports how it exited.
  virtual absl::Status Close() = 0;

  const Rxfilename& source() const { return source_; }
  // What messages call the input: the file, "stdin" or "'CMD |'".
  const std::string& name() const { return name_; }
  // Moves a file's stream to a byte offset (scripts that point into one archive many times).
  absl::Status Seek(int64_t offset);

 protected:
  InputStream(Rxfilename source, std::string name)
      : source_(std::move(source)), name_(std::move(name)) {}

 private:
  Rxfilename source_;
  std::string name_;
};

class OutputStream {
 public:
  static absl::StatusOr<std::unique_ptr<OutputStream>> Open(const std::string& wxfilename);
  virtual ~OutputStream() = default;

  virtual std::ostream& stream() = 0;
  // Flushes and ends the output: fails if a write failed or (a pipe) the command failed.
  virtual absl::Status Close() = 0;

  // What messages call the output: the file, "stdout" or "'| CMD'".
  const std::string& name() const { return name_; }
  bool is_file() const { return is_file_; }

 protected:
  OutputStream(std::string name, bool is_file) : name_(std::move(name)), is_file_(is_file) {}

 private:
  std::string name_;
  bool is_file_;
};

}  // namespace gmmscore
