#include "tools/matrix_copy.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "formats/kaldi_io.h"
#include "formats/kaldi_stream.h"
#include "formats/matrix_table.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Kaldi's VectorBase::ApplySoftMax on one row: exponentials of the values less the maximum,
// summed in float, scaled by the float nearest 1 / sum.
void SoftMax(float* row, int32_t n) {
  if (n == 0) return;
  const float max = *std::max_element(row, row + n);
  float sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += (row[i] = std::exp(row[i] - max));
  const float scale = static_cast<float>(1.0 / sum);
  for (int32_t i = 0; i < n; ++i) row[i] *= scale;
}

}  // namespace

absl::Status CheckMatrixTransform(const MatrixTransform& transform) {
  if (int(transform.apply_log) + int(transform.apply_exp) + int(transform.softmax_per_row) > 1) {
    return absl::InvalidArgumentError(
        "Only one of apply-log, apply-exp and apply-softmax-per-row can be given");
  }
  return absl::OkStatus();
}

void ApplyMatrixTransform(const MatrixTransform& transform, Matrix* m) {
  if (transform.scale != 1.0f) {
    for (float& x : m->data) x *= transform.scale;
  }
  if (transform.apply_log) {
    for (float& x : m->data) x = std::log(std::max(x, 1.0e-20f));
  }
  if (transform.apply_exp) {
    for (float& x : m->data) x = std::exp(x);
  }
  if (transform.softmax_per_row) {
    for (int32_t r = 0; r < m->rows; ++r) SoftMax(m->row(r), m->cols);
  }
  if (transform.power != 1.0f) {
    // Kaldi calls pow on floats in double and keeps the float nearest.
    for (float& x : m->data) {
      x = static_cast<float>(
          std::pow(static_cast<double>(x), static_cast<double>(transform.power)));
    }
  }
}

absl::StatusOr<int64_t> CopyMatrixTable(const std::string& rspecifier,
                                        const std::string& wspecifier,
                                        const MatrixTransform& transform) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer,
                       MatrixTableWriter::Open(wspecifier, TextReals::kKaldi));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader,
                       MatrixTableReader::Open(rspecifier));
  int64_t done = 0;
  std::string key;
  Matrix m;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &m));
    if (!more) break;
    ApplyMatrixTransform(transform, &m);
    GMM_RETURN_IF_ERROR(writer->Write(key, m));
    ++done;
  }
  GMM_RETURN_IF_ERROR(writer->Close());
  return done;
}

absl::Status CopyMatrixFile(const std::string& rxfilename, const std::string& wxfilename,
                            const MatrixTransform& transform, bool binary) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  KaldiReader reader(input->stream(), input->name(),
                     KaldiReader::ConsumeBinaryMarker(input->stream()));
  GMM_ASSIGN_OR_RETURN(Matrix m, reader.FloatMatrix());
  GMM_RETURN_IF_ERROR(input->Close());
  ApplyMatrixTransform(transform, &m);
  return WriteMatrixFile(m, wxfilename, binary, TextReals::kKaldi);
}

}  // namespace gmmscore
