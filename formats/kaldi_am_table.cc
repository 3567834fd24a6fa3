#include "formats/kaldi_am_table.h"

#include "absl/strings/str_cat.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_model.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<AmDiagGmmTableWriter>> AmDiagGmmTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<AmDiagGmmTableWriter>(new AmDiagGmmTableWriter(std::move(entries)));
}

absl::Status AmDiagGmmTableWriter::Write(const std::string& key, const GmmModel& model) {
  return entries_->Write(key, [&](std::ostream& os, bool binary) {
    KaldiWriter writer(os, binary);
    writer.BinaryMarker();
    WriteKaldiAmDiagGmm(model, writer);
  });
}

absl::StatusOr<std::unique_ptr<AmDiagGmmTableReader>> AmDiagGmmTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseRspecifier(rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<AmDiagGmmTableReader>(new AmDiagGmmTableReader(std::move(entries)));
}

absl::StatusOr<bool> AmDiagGmmTableReader::Next(std::string* key, GmmModel* model) {
  GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
  if (!more) return false;
  std::istream& is = entries_->object();
  const bool binary = KaldiReader::ConsumeBinaryMarker(is);
  KaldiReader reader(is, entries_->object_name(), binary);
  GMM_ASSIGN_OR_RETURN(GmmModelSpec spec, ReadKaldiAmDiagGmm(reader));
  spec.source_format = "kaldi";
  absl::StatusOr<GmmModel> read = GmmModel::Create(std::move(spec));
  if (!read.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(entries_->object_name(), ": ", read.status().message()));
  }
  *model = *std::move(read);
  return true;
}

}  // namespace gmmscore
