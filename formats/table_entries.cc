#include "formats/table_entries.h"

#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr size_t kMaxKeyLength = 4096;

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

// "ark:": the keys and objects of one stream.
class ArchiveEntries final : public TableEntryReader {
 public:
  explicit ArchiveEntries(std::unique_ptr<InputStream> archive) : archive_(std::move(archive)) {}

  absl::StatusOr<bool> Next(std::string* key) override {
    if (done_) return false;
    std::istream& is = archive_->stream();
    is >> std::ws;
    if (is.peek() == EOF) {
      done_ = true;
      GMM_RETURN_IF_ERROR(archive_->Close());
      return false;
    }
    key->clear();
    for (int c = is.peek(); c != EOF && !std::isspace(c); c = is.peek()) {
      if (c == '\0' || key->size() == kMaxKeyLength) {
        return absl::InvalidArgumentError(
            absl::StrCat(archive_->name(), ": bad archive key after '", key->substr(0, 80),
                         c == '\0' ? "' (is this a Kaldi archive?)" : "': key too long"));
      }
      key->push_back(static_cast<char>(is.get()));
    }
    const int after = is.peek();
    if (after == ' ' || after == '\t') {
      is.get();
    } else if (after != '\n') {
      return absl::InvalidArgumentError(absl::StrCat(
          archive_->name(), ": ",
          after == EOF ? "the archive ends after key " : "expected a space after key ", *key));
    }
    object_name_ = absl::StrCat(archive_->name(), " (key ", *key, ")");
    return true;
  }

  std::istream& object() override { return archive_->stream(); }

 private:
  std::unique_ptr<InputStream> archive_;
  bool done_ = false;
};

// "scp:": lines "KEY RXFILENAME"; an input stays open while consecutive entries point into it.
class ScriptEntries final : public TableEntryReader {
 public:
  explicit ScriptEntries(std::unique_ptr<InputStream> script) : script_(std::move(script)) {}

  absl::StatusOr<bool> Next(std::string* key) override {
    if (done_) return false;
    std::string line;
    do {
      if (!std::getline(script_->stream(), line)) {
        done_ = true;
        GMM_RETURN_IF_ERROR(CloseEntry());
        GMM_RETURN_IF_ERROR(script_->Close());
        return false;
      }
      ++line_number_;
    } while (absl::StripAsciiWhitespace(line).empty());
    const std::string where = absl::StrCat(script_->name(), ": line ", line_number_, ": ");
    const absl::string_view stripped = absl::StripAsciiWhitespace(line);
    const auto space = stripped.find_first_of(" \t");
    if (space == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(where, "expected KEY RXFILENAME"));
    }
    *key = std::string(stripped.substr(0, space));
    absl::StatusOr<Rxfilename> source =
        ParseRxfilename(std::string(absl::StripAsciiWhitespace(stripped.substr(space))));
    if (!source.ok()) return Prefixed(where, source.status());
    if (entry_ != nullptr && source->kind == Rxfilename::Kind::kFile &&
        entry_->source().kind == Rxfilename::Kind::kFile &&
        entry_->source().target == source->target) {
      if (absl::Status s = entry_->Seek(source->offset); !s.ok()) return Prefixed(where, s);
    } else {
      if (absl::Status s = CloseEntry(); !s.ok()) return Prefixed(where, s);
      absl::StatusOr<std::unique_ptr<InputStream>> opened = InputStream::Open(*source);
      if (!opened.ok()) return Prefixed(where, opened.status());
      entry_ = *std::move(opened);
    }
    object_name_ = absl::StrCat(entry_->name(), " (key ", *key, ")");
    return true;
  }

  std::istream& object() override { return entry_->stream(); }

 private:
  absl::Status CloseEntry() {
    if (entry_ == nullptr) return absl::OkStatus();
    absl::Status s = entry_->Close();
    entry_.reset();
    return s;
  }

  std::unique_ptr<InputStream> script_;
  std::unique_ptr<InputStream> entry_;
  int64_t line_number_ = 0;
  bool done_ = false;
};

bool IsKey(const std::string& key) {
  if (key.empty()) return false;
  for (const char c : key) {
    if (!std::isprint(static_cast<unsigned char>(c)) || std::isspace(static_cast<unsigned char>(c)))
      return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TableEntryReader>> TableEntryReader::Open(
    const TableSpecifier& spec) {
  if (spec.kind != TableKind::kArchive && spec.kind != TableKind::kScript) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", spec.path, "': read this table as ark: or scp:"));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(spec.path));
  if (spec.kind == TableKind::kScript) return std::make_unique<ScriptEntries>(std::move(input));
  return std::make_unique<ArchiveEntries>(std::move(input));
}

absl::StatusOr<std::unique_ptr<TableEntryWriter>> TableEntryWriter::Open(
    const std::string& wspecifier) {
  std::unique_ptr<TableEntryWriter> w(new TableEntryWriter());
  GMM_ASSIGN_OR_RETURN(w->spec_, ParseWspecifier(wspecifier));
  GMM_ASSIGN_OR_RETURN(w->archive_, OutputStream::Open(w->spec_.path));
  w->description_ = w->archive_->name();
  if (w->spec_.kind == TableKind::kArchiveAndScript) {
    if (!w->archive_->is_file()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad wspecifier '", wspecifier, "': ark,scp needs a real archive file to point into"));
    }
    GMM_ASSIGN_OR_RETURN(w->script_, OutputStream::Open(w->spec_.script_path));
    absl::StrAppend(&w->description_, " (script ", w->script_->name(), ")");
  }
  return w;
}

TableEntryWriter::~TableEntryWriter() {
  if (!closed_) Close().IgnoreError();
}

absl::Status TableEntryWriter::Write(
    const std::string& key, absl::FunctionRef<void(std::ostream&, bool binary)> write_object) {
  if (!IsKey(key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad key '", key, "': keys are non-empty and have no spaces"));
  }
  std::ostream& os = archive_->stream();
  os << key << ' ';
  if (script_ != nullptr) {
    script_->stream() << key << ' ' << spec_.path << ':' << os.tellp() << '\n';
  }
  write_object(os, !spec_.text);
  if (spec_.flush) {
    os.flush();
    if (script_ != nullptr) script_->stream().flush();
  }
  if (!os || (script_ != nullptr && !script_->stream())) {
    return absl::DataLossError(absl::StrCat(description_, ": write failed"));
  }
  return absl::OkStatus();
}

absl::Status TableEntryWriter::Close() {
  closed_ = true;
  // Open() may have failed before the archive or the script was opened.
  absl::Status archive = archive_ != nullptr ? archive_->Close() : absl::OkStatus();
  absl::Status script = script_ != nullptr ? script_->Close() : absl::OkStatus();
  return archive.ok() ? script : archive;
}

}  // namespace gmmscore
