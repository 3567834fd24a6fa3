#include "formats/double_matrix_table.h"

#include "absl/strings/str_cat.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_stream.h"
#include "formats/table_specifier.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

absl::StatusOr<DoubleMatrix> ReadObject(std::istream& is, const std::string& name) {
  const bool binary = KaldiReader::ConsumeBinaryMarker(is);
  KaldiReader reader(is, name, binary);
  DoubleMatrix m;
  GMM_ASSIGN_OR_RETURN(m.data, reader.DoubleMatrix(&m.rows, &m.cols));
  return m;
}

void WriteObject(const DoubleMatrix& m, std::ostream& os, bool binary) {
  KaldiWriter writer(os, binary);
  writer.BinaryMarker();
  writer.DoubleMatrix(m.rows, m.cols, m.data.data());
}

}  // namespace

absl::StatusOr<std::unique_ptr<DoubleMatrixTableWriter>> DoubleMatrixTableWriter::Open(
    const std::string& wspecifier) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryWriter> entries,
                       TableEntryWriter::Open(wspecifier));
  return std::unique_ptr<DoubleMatrixTableWriter>(new DoubleMatrixTableWriter(std::move(entries)));
}

absl::Status DoubleMatrixTableWriter::Write(const std::string& key, const DoubleMatrix& value) {
  return entries_->Write(key,
                         [&](std::ostream& os, bool binary) { WriteObject(value, os, binary); });
}

absl::StatusOr<std::unique_ptr<DoubleMatrixTableReader>> DoubleMatrixTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(const TableSpecifier spec, ParseRspecifier(rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<DoubleMatrixTableReader>(new DoubleMatrixTableReader(std::move(entries)));
}

absl::StatusOr<bool> DoubleMatrixTableReader::Next(std::string* key, DoubleMatrix* value) {
  GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
  if (!more) return false;
  GMM_ASSIGN_OR_RETURN(*value, ReadObject(entries_->object(), entries_->object_name()));
  return true;
}

absl::StatusOr<DoubleMatrix> ReadDoubleMatrixFile(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  GMM_ASSIGN_OR_RETURN(DoubleMatrix m, ReadObject(input->stream(), input->name()));
  GMM_RETURN_IF_ERROR(input->Close());
  return m;
}

absl::Status WriteDoubleMatrixFile(const DoubleMatrix& m, const std::string& wxfilename,
                                   bool binary) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> output, OutputStream::Open(wxfilename));
  WriteObject(m, output->stream(), binary);
  if (!output->stream()) {
    return absl::DataLossError(absl::StrCat(output->name(), ": write failed"));
  }
  return output->Close();
}

}  // namespace gmmscore
