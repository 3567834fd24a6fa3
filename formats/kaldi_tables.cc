#include "formats/kaldi_tables.h"

#include <algorithm>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "formats/kaldi_io.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// A float as Kaldi's table streams print it: "os << f" at precision 7.
void WriteTextFloat(std::ostream& os, float value) {
  char text[32];
  const int n = std::snprintf(text, sizeof(text), "%.7g", static_cast<double>(value));
  os.write(text, n);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Int32VectorTableWriter>> Int32VectorTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<Int32VectorTableWriter>(new Int32VectorTableWriter(std::move(entries)));
}

absl::Status Int32VectorTableWriter::Write(const std::string& key,
                                           absl::Span<const int32_t> value) {
  return entries_->Write(key, [&](std::ostream& os, bool binary) {
    KaldiWriter writer(os, binary);
    writer.BinaryMarker();
    if (binary) writer.Int32(static_cast<int32_t>(value.size()));
    for (const int32_t x : value) writer.Int32(x);
    writer.Newline();
  });
}

absl::StatusOr<std::unique_ptr<FloatTableWriter>> FloatTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<FloatTableWriter>(new FloatTableWriter(std::move(entries)));
}

absl::Status FloatTableWriter::Write(const std::string& key, float value) {
  return entries_->Write(key, [&](std::ostream& os, bool binary) {
    if (binary) {
      KaldiWriter writer(os, binary);
      writer.BinaryMarker();
      writer.Float(value);
    } else {
      WriteTextFloat(os, value);
      os << " \n";
    }
  });
}

absl::StatusOr<std::unique_ptr<PosteriorTableWriter>> PosteriorTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<PosteriorTableWriter>(new PosteriorTableWriter(std::move(entries)));
}

absl::Status PosteriorTableWriter::Write(
    const std::string& key, absl::Span<const std::vector<std::pair<int32_t, float>>> frames) {
  return entries_->Write(key, [&](std::ostream& os, bool binary) {
    if (binary) {
      KaldiWriter writer(os, binary);
      writer.BinaryMarker();
      writer.Int32(static_cast<int32_t>(frames.size()));
      for (const auto& frame : frames) {
        writer.Int32(static_cast<int32_t>(frame.size()));
        for (const auto& [tid, weight] : frame) {
          writer.Int32(tid);
          writer.Float(weight);
        }
      }
      return;
    }
    for (const auto& frame : frames) {
      os << "[ ";
      for (const auto& [tid, weight] : frame) {
        os << tid << ' ';
        WriteTextFloat(os, weight);
        os << ' ';
      }
      os << "] ";
    }
    os << '\n';
  });
}

absl::StatusOr<std::unique_ptr<FloatVectorTableWriter>> FloatVectorTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<FloatVectorTableWriter>(new FloatVectorTableWriter(std::move(entries)));
}

absl::Status FloatVectorTableWriter::Write(const std::string& key, absl::Span<const float> value) {
  return entries_->Write(key, [&](std::ostream& os, bool binary) {
    if (binary) {
      KaldiWriter writer(os, binary);
      writer.BinaryMarker();
      writer.FloatVector(value.data(), value.size());
    } else {
      os << " [ ";
      for (const float x : value) {
        WriteTextFloat(os, x);
        os << ' ';
      }
      os << "]\n";
    }
  });
}

absl::StatusOr<std::unique_ptr<Int32VectorTableReader>> Int32VectorTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseRspecifier(rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<Int32VectorTableReader>(new Int32VectorTableReader(std::move(entries)));
}

absl::StatusOr<bool> Int32VectorTableReader::Next(std::string* key, std::vector<int32_t>* value) {
  GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
  if (!more) return false;
  std::istream& is = entries_->object();
  const std::string& name = entries_->object_name();
  value->clear();
  if (KaldiReader::ConsumeBinaryMarker(is)) {
    KaldiReader reader(is, name, /*binary=*/true);
    GMM_ASSIGN_OR_RETURN(const int32_t size, reader.Int32());
    if (size < 0) return reader.Error(absl::StrCat("bad integer vector length ", size));
    value->reserve(size_t(std::min(size, 1 << 16)));  // the rest as the values arrive
    for (int32_t i = 0; i < size; ++i) {
      GMM_ASSIGN_OR_RETURN(const int32_t x, reader.Int32());
      value->push_back(x);
    }
    return true;
  }
  std::string line;  // text: the values up to the end of the line
  if (!std::getline(is, line)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the archive ends after the key"));
  }
  for (const absl::string_view word :
       absl::StrSplit(line, absl::ByAnyChar(" \t\r\f\v"), absl::SkipEmpty())) {
    int32_t x = 0;
    if (!absl::SimpleAtoi(word, &x)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": expected an integer, found '", word.substr(0, 40), "'"));
    }
    value->push_back(x);
  }
  return true;
}

}  // namespace gmmscore
