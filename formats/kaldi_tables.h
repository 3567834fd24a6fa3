// Kaldi tables of alignments, scores and per-frame values, byte for byte as Kaldi's holders
// (util/kaldi-holder-inl.h) write them, through every specifier of formats/table_entries.h
// (ark, ark,t, ark,scp, "-", pipes). Each entry is "KEY " and then:
//
//   Int32VectorTableWriter (Int32VectorWriter: alignments)
//     binary  "\0B", the length and then each value as WriteBasicType<int32> ('\4' + 4 bytes)
//     text    "2 6 5 12 \n" (each value and a space, then a newline)
//   FloatTableWriter (BaseFloatWriter: per-utterance scores)
//     binary  "\0B" '\4' + 4 bytes
//     text    "-973.549 \n"
//   FloatVectorTableWriter (BaseFloatVectorWriter: per-frame log-likelihoods)
//     binary  "\0B" "FV " '\4' + the length (4 bytes), then the floats
//     text    " [ 1.5 -2 3 ]\n"
//
// Text floats are what Kaldi's streams print: an ostream's default notation at precision 7
// (printf "%.7g"), so equal values give identical files (they do not round-trip exactly).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "formats/table_entries.h"

namespace gmmscore {

// What the writers share: the table being written.
class KaldiTableWriterBase {
 public:
  // Flushes and closes; fails where a write or a pipe's command failed. The destructor closes a
  // writer that was not closed, ignoring errors.
  absl::Status Close() { return entries_->Close(); }
  // Where the table goes, for messages.
  const std::string& description() const { return entries_->description(); }

 protected:
  explicit KaldiTableWriterBase(std::unique_ptr<TableEntryWriter> entries)
      : entries_(std::move(entries)) {}
  ~KaldiTableWriterBase() = default;
  std::unique_ptr<TableEntryWriter> entries_;
};

class Int32VectorTableWriter : public KaldiTableWriterBase {
 public:
  static absl::StatusOr<std::unique_ptr<Int32VectorTableWriter>> Open(
      const std::string& wspecifier);
  absl::Status Write(const std::string& key, absl::Span<const int32_t> value);

 private:
  using KaldiTableWriterBase::KaldiTableWriterBase;
};

// Int32Writer (feat-to-len's lengths, copy-feats --write-num-frames): binary "\0B" '\4' + 4
// bytes, text "297 \n".
class Int32TableWriter : public KaldiTableWriterBase {
 public:
  static absl::StatusOr<std::unique_ptr<Int32TableWriter>> Open(const std::string& wspecifier);
  absl::Status Write(const std::string& key, int32_t value);

 private:
  using KaldiTableWriterBase::KaldiTableWriterBase;
};

// Int32PairVectorWriter (ali-to-phones --write-lengths): binary "\0B", the length, then each
// pair's two values as WriteBasicType<int32>; text "1 5 ; 2 7 \n".
class Int32PairVectorTableWriter : public KaldiTableWriterBase {
 public:
  static absl::StatusOr<std::unique_ptr<Int32PairVectorTableWriter>> Open(
      const std::string& wspecifier);
  absl::Status Write(const std::string& key, absl::Span<const std::pair<int32_t, int32_t>> value);

 private:
  using KaldiTableWriterBase::KaldiTableWriterBase;
};

class FloatTableWriter : public KaldiTableWriterBase {
 public:
  static absl::StatusOr<std::unique_ptr<FloatTableWriter>> Open(const std::string& wspecifier);
  absl::Status Write(const std::string& key, float value);

 private:
  using KaldiTableWriterBase::KaldiTableWriterBase;
};

class FloatVectorTableWriter : public KaldiTableWriterBase {
 public:
  static absl::StatusOr<std::unique_ptr<FloatVectorTableWriter>> Open(
      const std::string& wspecifier);
  absl::Status Write(const std::string& key, absl::Span<const float> value);

 private:
  using KaldiTableWriterBase::KaldiTableWriterBase;
};

// Kaldi's Posterior tables (ali-to-post's output, gmm-acc-stats's input): per frame a list of
// (transition-id, weight) pairs; binary as Kaldi's PosteriorHolder, text "[ 12 0.9 13 0.1 ] [ ...
// ]".
class PosteriorTableWriter : public KaldiTableWriterBase {
 public:
  static absl::StatusOr<std::unique_ptr<PosteriorTableWriter>> Open(const std::string& wspecifier);
  absl::Status Write(const std::string& key,
                     absl::Span<const std::vector<std::pair<int32_t, float>>> frames);

 private:
  using KaldiTableWriterBase::KaldiTableWriterBase;
};

// Kaldi's GaussPost tables (gmm-post-to-gpost's output, gmm-est-fmllr-gpost's input): per frame a
// list of (pdf-id, that pdf's Gaussians' posteriors), as Kaldi's GaussPostHolder writes them:
// binary, the frame count, and per frame its count and each pdf-id and float vector ("FV");
// text, the same numbers with each vector " [ ... ]\n", and a newline at the end.
using GaussPostFrames = std::vector<std::vector<std::pair<int32_t, std::vector<float>>>>;

class GaussPostTableWriter : public KaldiTableWriterBase {
 public:
  static absl::StatusOr<std::unique_ptr<GaussPostTableWriter>> Open(const std::string& wspecifier);
  absl::Status Write(const std::string& key, const GaussPostFrames& frames);

 private:
  using KaldiTableWriterBase::KaldiTableWriterBase;
};

class GaussPostTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<GaussPostTableReader>> Open(const std::string& rspecifier);
  // Reads the next entry; returns false at the end of the table.
  absl::StatusOr<bool> Next(std::string* key, GaussPostFrames* frames);

 private:
  explicit GaussPostTableReader(std::unique_ptr<TableEntryReader> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryReader> entries_;
};

// Reads what Int32VectorTableWriter writes (binary or text entries, as Kaldi's
// SequentialInt32VectorReader does) from "ark:" and "scp:" tables.
class Int32VectorTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<Int32VectorTableReader>> Open(
      const std::string& rspecifier);
  // Reads the next entry; returns false at the end of the table.
  absl::StatusOr<bool> Next(std::string* key, std::vector<int32_t>* value);

 private:
  explicit Int32VectorTableReader(std::unique_ptr<TableEntryReader> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryReader> entries_;
};

// Reads what PosteriorTableWriter writes (Kaldi's PosteriorHolder, binary or text entries) from
// "ark:" and "scp:" tables: per frame the (transition-id, weight) pairs.
class PosteriorTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<PosteriorTableReader>> Open(const std::string& rspecifier);
  // Reads the next entry; returns false at the end of the table.
  absl::StatusOr<bool> Next(std::string* key,
                            std::vector<std::vector<std::pair<int32_t, float>>>* frames);

 private:
  explicit PosteriorTableReader(std::unique_ptr<TableEntryReader> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryReader> entries_;
};

// Reads text tables of words per entry ("KEY w1 w2 ...", Kaldi's TokenVectorHolder: transcripts,
// spk2utt) from "ark:" and "scp:" tables.
class TokenVectorTableReader {
 public:
  static absl::StatusOr<std::unique_ptr<TokenVectorTableReader>> Open(
      const std::string& rspecifier);
  absl::StatusOr<bool> Next(std::string* key, std::vector<std::string>* value);

 private:
  explicit TokenVectorTableReader(std::unique_ptr<TableEntryReader> entries)
      : entries_(std::move(entries)) {}
  std::unique_ptr<TableEntryReader> entries_;
};

// A table of one token per key (Kaldi's TokenHolder: utt2spk) as a map. An entry with no token or
// more than one is an error naming the table and the key, as Kaldi's reader refuses it.
absl::StatusOr<std::map<std::string, std::string>> ReadTokenMap(const std::string& rspecifier);

}  // namespace gmmscore
