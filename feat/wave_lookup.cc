#include "feat/wave_lookup.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "formats/table_specifier.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<WaveLookup>> WaveLookup::Open(const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(const TableSpecifier spec, ParseRspecifier(rspecifier));
  std::unique_ptr<WaveLookup> lookup(new WaveLookup());
  if (spec.kind != TableKind::kScript) {
    GMM_ASSIGN_OR_RETURN(lookup->archive_, WaveTableReader::Open(rspecifier));
    return lookup;
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> script, InputStream::Open(spec.path));
  std::string line;
  for (int64_t number = 1; std::getline(script->stream(), line); ++number) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(line);
    if (stripped.empty()) continue;
    const auto space = stripped.find_first_of(" \t");
    const std::string where = absl::StrCat(script->name(), ": line ", number, ": ");
    if (space == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(where, "expected KEY RXFILENAME"));
    }
    auto source = ParseRxfilename(std::string(absl::StripAsciiWhitespace(stripped.substr(space))));
    if (!source.ok()) {
      return absl::Status(source.status().code(), where + std::string(source.status().message()));
    }
    lookup->script_.emplace(std::string(stripped.substr(0, space)), *std::move(source));
  }
  GMM_RETURN_IF_ERROR(script->Close());
  return lookup;
}

absl::StatusOr<const WaveData*> WaveLookup::Find(const std::string& key) {
  if (archive_ == nullptr) {
    const auto entry = script_.find(key);
    if (entry == script_.end()) return nullptr;
    if (key != last_key_) {
      read_.clear();
      last_key_.clear();
      GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(entry->second));
      GMM_ASSIGN_OR_RETURN(
          WaveData wave,
          ReadWave(input->stream(), absl::StrCat(input->name(), " (key ", key, ")")));
      GMM_RETURN_IF_ERROR(input->Close());
      read_.emplace(key, std::move(wave));
      last_key_ = key;
    }
    return &read_.at(key);
  }
  while (!read_.count(key) && !archive_done_) {
    std::string next;
    WaveData wave;
    GMM_ASSIGN_OR_RETURN(const bool more, archive_->Next(&next, &wave));
    if (!more) {
      archive_done_ = true;
      break;
    }
    read_.emplace(next, std::move(wave));
  }
  const auto found = read_.find(key);
  return found == read_.end() ? nullptr : &found->second;
}

}  // namespace gmmscore
