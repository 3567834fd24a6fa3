// copy-matrix's work: matrices copied from a table to a table, or from a file to a file, each
// optionally transformed as Kaldi's copy-matrix transforms it, in float and in its order: scaled,
// then the log (of values floored at 1e-20), the exponential or a softmax of each row, then raised
// to a power. Written as Kaldi writes matrices (text reals at Kaldi's 7 digits).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "util/matrix.h"

namespace gmmscore {

struct MatrixTransform {
  float scale = 1.0f;
  bool apply_log = false;
  bool apply_exp = false;
  bool softmax_per_row = false;
  float power = 1.0f;
};

// An error where more than one of log, exp and softmax is asked for.
absl::Status CheckMatrixTransform(const MatrixTransform& transform);
void ApplyMatrixTransform(const MatrixTransform& transform, Matrix* m);

// Copies every matrix of a table; returns how many.
absl::StatusOr<int64_t> CopyMatrixTable(const std::string& rspecifier,
                                        const std::string& wspecifier,
                                        const MatrixTransform& transform);
// Copies one matrix object from an rxfilename to a wxfilename, binary or text.
absl::Status CopyMatrixFile(const std::string& rxfilename, const std::string& wxfilename,
                            const MatrixTransform& transform, bool binary);

}  // namespace gmmscore
