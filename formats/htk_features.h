// HTK parameter files (HTK Book section 5.10.1): a 12-byte big-endian header (nSamples int32,
// sampPeriod int32 in 100 ns units, sampSize int16 bytes per frame, parmKind int16), then
// nSamples frames of big-endian float32. Compressed (_C) files and kinds not stored as floats
// (WAVEFORM, IREFC, DISCRETE) are not supported; the trailing CRC of _K files is not checked.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/matrix.h"

namespace gmmscore {

inline constexpr int16_t kHtkMfcc = 6;

// One row per frame. `name` is what errors call the input: "NAME: byte B: what".
absl::StatusOr<Matrix> ReadHtkFeatures(std::istream& is, const std::string& name);
// `parm_kind` must be a float kind without _C or _K; `samp_period` is in 100 ns units.
absl::Status WriteHtkFeatures(const Matrix& m, std::ostream& os, int16_t parm_kind = kHtkMfcc,
                              int32_t samp_period = 100000);

}  // namespace gmmscore
