// CMU Sphinx feature files (.mfc, as sphinx_fe writes them): an int32 count of the float32
// values that follow, then the values, frame after frame. There is no byte-order mark: the order
// is the one in which the count matches the file size.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/matrix.h"

namespace gmmscore {

// Reads frames of `dim` values (13 for sphinx_fe cepstra). `name` is what errors call the input.
absl::StatusOr<Matrix> ReadSphinxFeatures(std::istream& is, const std::string& name,
                                          int32_t dim = 13);
// Writes little-endian; the frame size is not stored, readers must know it.
absl::Status WriteSphinxFeatures(const Matrix& m, std::ostream& os);

}  // namespace gmmscore
