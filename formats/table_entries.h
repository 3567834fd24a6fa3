// The entries of a Kaldi table, whatever their objects (util/kaldi-table.h): every table reader
// and writer of formats/ walks its table through these, so each gets the same specifiers, pipes,
// scripts and key rules.
//
// An archive is a sequence of "KEY " followed by the object (binary objects start with "\0B";
// Kaldi also accepts a tab after the key, and a newline, which the object then starts with). A
// script ("scp:") has lines "KEY RXFILENAME", the object being at the start of RXFILENAME or at
// its byte offset ("ARCHIVE:OFFSET"). Keys are non-empty and have no whitespace.
#pragma once

#include <istream>
#include <memory>
#include <ostream>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "formats/kaldi_stream.h"
#include "formats/table_specifier.h"

namespace gmmscore {

// Reads "ark:" and "scp:" tables entry by entry; the caller reads each object from object().
class TableEntryReader {
 public:
  static absl::StatusOr<std::unique_ptr<TableEntryReader>> Open(const TableSpecifier& spec);
  virtual ~TableEntryReader() = default;

  // Moves to the next entry. Returns false at the end of the table, once every input is closed
  // and every command's exit status checked (a failed command is an error naming it).
  virtual absl::StatusOr<bool> Next(std::string* key) = 0;
  // The stream positioned at the current entry's object, and what errors call that object:
  // "ARCHIVE (key KEY)".
  virtual std::istream& object() = 0;
  const std::string& object_name() const { return object_name_; }

 protected:
  TableEntryReader() = default;
  std::string object_name_;
};

// Writes "ark:" tables (binary or ",t" text), and for "ark,scp:" the script with each entry's
// "KEY ARCHIVE:OFFSET" beside.
class TableEntryWriter {
 public:
  static absl::StatusOr<std::unique_ptr<TableEntryWriter>> Open(const std::string& wspecifier);
  ~TableEntryWriter();  // closes what Close() was not called for, ignoring errors

  // Writes "KEY " and then the object through write_object(stream, binary).
  absl::Status Write(const std::string& key,
                     absl::FunctionRef<void(std::ostream&, bool binary)> write_object);
  // Flushes and closes the archive and the script; fails where a write or a command failed.
  absl::Status Close();
  // Whether objects are written in Kaldi's binary form (no ",t").
  bool binary() const { return !spec_.text; }
  // Where the table goes, for messages: "ali.ark", "stdout", "'| gzip -c >ali.gz'" (plus
  // " (script S)").
  const std::string& description() const { return description_; }

 private:
  TableEntryWriter() = default;
  TableSpecifier spec_;
  std::unique_ptr<OutputStream> archive_;
  std::unique_ptr<OutputStream> script_;
  std::string description_;
  bool closed_ = false;
};

}  // namespace gmmscore
