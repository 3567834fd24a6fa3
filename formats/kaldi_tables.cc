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

absl::StatusOr<std::unique_ptr<Int32TableWriter>> Int32TableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<Int32TableWriter>(new Int32TableWriter(std::move(entries)));
}

absl::Status Int32TableWriter::Write(const std::string& key, int32_t value) {
  return entries_->Write(key, [&](std::ostream& os, bool binary) {
    if (binary) {
      KaldiWriter writer(os, binary);
      writer.BinaryMarker();
      writer.Int32(value);
    } else {
      os << value << " \n";
    }
  });
}

absl::StatusOr<std::unique_ptr<Int32PairVectorTableWriter>> Int32PairVectorTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<Int32PairVectorTableWriter>(
      new Int32PairVectorTableWriter(std::move(entries)));
}

absl::Status Int32PairVectorTableWriter::Write(
    const std::string& key, absl::Span<const std::pair<int32_t, int32_t>> value) {
  return entries_->Write(key, [&](std::ostream& os, bool binary) {
    KaldiWriter writer(os, binary);
    writer.BinaryMarker();
    if (binary) writer.Int32(static_cast<int32_t>(value.size()));
    for (size_t i = 0; i < value.size(); ++i) {
      writer.Int32(value[i].first);
      writer.Int32(value[i].second);
      if (!binary && i + 1 < value.size()) os << "; ";
    }
    if (!binary) os << '\n';
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

absl::StatusOr<std::unique_ptr<PosteriorTableReader>> PosteriorTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseRspecifier(rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<PosteriorTableReader>(new PosteriorTableReader(std::move(entries)));
}

absl::StatusOr<bool> PosteriorTableReader::Next(
    std::string* key, std::vector<std::vector<std::pair<int32_t, float>>>* frames) {
  GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
  if (!more) return false;
  std::istream& is = entries_->object();
  const std::string& name = entries_->object_name();
  frames->clear();
  if (KaldiReader::ConsumeBinaryMarker(is)) {
    KaldiReader reader(is, name, /*binary=*/true);
    GMM_ASSIGN_OR_RETURN(const int32_t num_frames, reader.Int32());
    // Each frame takes 5 bytes at least (its count).
    GMM_RETURN_IF_ERROR(reader.CheckRoom(uint64_t(std::max(num_frames, 0)), 5, uint64_t{1} << 31,
                                         "frames of posteriors"));
    if (num_frames < 0) return reader.Error(absl::StrCat("bad number of frames ", num_frames));
    frames->reserve(size_t(std::min(num_frames, 1 << 16)));
    for (int32_t t = 0; t < num_frames; ++t) {
      GMM_ASSIGN_OR_RETURN(const int32_t n, reader.Int32());
      if (n < 0) return reader.Error(absl::StrCat("frame ", t, ": bad number of pairs ", n));
      GMM_RETURN_IF_ERROR(reader.CheckRoom(uint64_t(n), 10, uint64_t{1} << 31, "pairs"));
      auto& frame = frames->emplace_back();
      frame.reserve(size_t(std::min(n, 1 << 12)));
      for (int32_t i = 0; i < n; ++i) {
        GMM_ASSIGN_OR_RETURN(const int32_t tid, reader.Int32());
        GMM_ASSIGN_OR_RETURN(const float weight, reader.Float());
        frame.emplace_back(tid, weight);
      }
    }
    return true;
  }
  // Text: "[ tid weight tid weight ] [ ... ]" up to the end of the line.
  std::string line;
  if (!std::getline(is, line)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the archive ends after the key"));
  }
  std::vector<absl::string_view> words =
      absl::StrSplit(line, absl::ByAnyChar(" \t\r\f\v"), absl::SkipEmpty());
  auto bad = [&](size_t i, absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": word ", i + 1, " ('", words[i].substr(0, 40), "'): ", what));
  };
  for (size_t i = 0; i < words.size();) {
    if (words[i] != "[") return bad(i, "expected [");
    auto& frame = frames->emplace_back();
    for (++i;; i += 2) {
      if (i >= words.size()) {
        return absl::InvalidArgumentError(absl::StrCat(name, ": a frame has no closing ]"));
      }
      if (words[i] == "]") {
        ++i;
        break;
      }
      int32_t tid = 0;
      float weight = 0;
      if (!absl::SimpleAtoi(words[i], &tid)) return bad(i, "expected a transition-id");
      if (i + 1 >= words.size() || !absl::SimpleAtof(words[i + 1], &weight)) {
        return bad(std::min(i + 1, words.size() - 1), "expected a weight");
      }
      frame.emplace_back(tid, weight);
    }
  }
  return true;
}

absl::StatusOr<std::unique_ptr<GaussPostTableWriter>> GaussPostTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<GaussPostTableWriter>(new GaussPostTableWriter(std::move(entries)));
}

absl::Status GaussPostTableWriter::Write(const std::string& key, const GaussPostFrames& frames) {
  return entries_->Write(key, [&](std::ostream& os, bool binary) {
    KaldiWriter writer(os, binary);
    writer.BinaryMarker();
    writer.Int32(static_cast<int32_t>(frames.size()));
    for (const auto& frame : frames) {
      writer.Int32(static_cast<int32_t>(frame.size()));
      for (const auto& [pdf, posteriors] : frame) {
        writer.Int32(pdf);
        if (binary) {
          writer.FloatVector(posteriors.data(), posteriors.size());
          continue;
        }
        os << " [ ";
        for (const float p : posteriors) {
          WriteTextFloat(os, p);
          os << ' ';
        }
        os << "]\n";
      }
    }
    writer.Newline();
  });
}

absl::StatusOr<std::unique_ptr<GaussPostTableReader>> GaussPostTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseRspecifier(rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<GaussPostTableReader>(new GaussPostTableReader(std::move(entries)));
}

absl::StatusOr<bool> GaussPostTableReader::Next(std::string* key, GaussPostFrames* frames) {
  GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
  if (!more) return false;
  std::istream& is = entries_->object();
  const bool binary = KaldiReader::ConsumeBinaryMarker(is);
  KaldiReader reader(is, entries_->object_name(), binary);
  frames->clear();
  GMM_ASSIGN_OR_RETURN(const int32_t num_frames, reader.Int32());
  if (num_frames < 0) return reader.Error(absl::StrCat("bad number of frames ", num_frames));
  // Each frame takes 2 bytes at least (its count), 5 in binary.
  GMM_RETURN_IF_ERROR(reader.CheckRoom(uint64_t(num_frames), binary ? 5 : 2, uint64_t{1} << 31,
                                       "frames of Gaussian posteriors"));
  frames->reserve(size_t(std::min(num_frames, 1 << 16)));
  for (int32_t t = 0; t < num_frames; ++t) {
    GMM_ASSIGN_OR_RETURN(const int32_t n, reader.Int32());
    if (n < 0) return reader.Error(absl::StrCat("frame ", t, ": bad number of pdfs ", n));
    GMM_RETURN_IF_ERROR(
        reader.CheckRoom(uint64_t(n), binary ? 13 : 6, uint64_t{1} << 31, "pdfs of a frame"));
    auto& frame = frames->emplace_back();
    frame.reserve(size_t(std::min(n, 1 << 12)));
    for (int32_t i = 0; i < n; ++i) {
      GMM_ASSIGN_OR_RETURN(const int32_t pdf, reader.Int32());
      GMM_ASSIGN_OR_RETURN(std::vector<float> posteriors, reader.FloatVector());
      frame.emplace_back(pdf, std::move(posteriors));
    }
  }
  return true;
}

absl::StatusOr<std::unique_ptr<TokenVectorTableReader>> TokenVectorTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseRspecifier(rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<TokenVectorTableReader>(new TokenVectorTableReader(std::move(entries)));
}

absl::StatusOr<bool> TokenVectorTableReader::Next(std::string* key,
                                                  std::vector<std::string>* value) {
  GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
  if (!more) return false;
  std::string line;
  if (!std::getline(entries_->object(), line)) {
    return absl::InvalidArgumentError(
        absl::StrCat(entries_->object_name(), ": the archive ends after the key"));
  }
  value->clear();
  for (const absl::string_view word :
       absl::StrSplit(line, absl::ByAnyChar(" \t\r\f\v"), absl::SkipEmpty())) {
    value->emplace_back(word);
  }
  return true;
}

absl::StatusOr<std::map<std::string, std::string>> ReadTokenMap(const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TokenVectorTableReader> reader,
                       TokenVectorTableReader::Open(rspecifier));
  std::map<std::string, std::string> map;
  std::string key;
  std::vector<std::string> value;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &value));
    if (!more) return map;
    if (value.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(rspecifier, ": entry ", key, " should have one token, has ", value.size()));
    }
    map[key] = std::move(value[0]);
  }
}

}  // namespace gmmscore
