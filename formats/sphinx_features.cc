// Reader and writer of Sphinx .mfc feature files.
#include "formats/sphinx_features.h"

#include <bit>
#include <iterator>
#include <limits>

#include "absl/strings/str_cat.h"
#include "formats/read_limits.h"
#include "formats/sphinx_s3io.h"

namespace gmmscore {
namespace {

// Which byte order makes the header count the floats that follow; an error if neither does.
absl::StatusOr<bool> DetectBigEndian(const std::string& bytes, const std::string& name) {
  if (bytes.size() < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": byte 0: ", bytes.size(), " bytes, too short for the header"));
  }
  const uint64_t data_bytes = bytes.size() - 4;
  const uint32_t little = LoadWord(bytes.data(), false);
  const uint32_t big = LoadWord(bytes.data(), true);
  if (uint64_t{little} * 4 == data_bytes) return false;
  if (uint64_t{big} * 4 == data_bytes) return true;
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": byte 0: the header counts ", little, " floats (", big,
                   " byte-swapped), but the file holds ", data_bytes, " bytes after it"));
}

absl::StatusOr<Matrix> ReadFeatures(std::istream& is, const std::string& name, int32_t dim) {
  if (dim < 1) return absl::InvalidArgumentError(absl::StrCat(name, ": bad dimension ", dim));
  const std::string bytes{std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>()};
  if (is.bad()) return absl::DataLossError(absl::StrCat(name, ": read failed"));
  auto big_endian = DetectBigEndian(bytes, name);
  if (!big_endian.ok()) return big_endian.status();
  const uint64_t count = (bytes.size() - 4) / 4;
  if (count % static_cast<uint64_t>(dim) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": byte 4: ", count, " values are not a whole number of frames of ", dim));
  }
  const uint64_t frames = count / static_cast<uint64_t>(dim);
  if (frames > uint64_t{std::numeric_limits<int32_t>::max()}) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", frames, " frames are too many"));
  }
  Matrix m(static_cast<int32_t>(frames), dim);
  for (uint64_t i = 0; i < count; ++i) {
    m.data[i] = std::bit_cast<float>(LoadWord(bytes.data() + 4 + 4 * i, *big_endian));
  }
  return m;
}

}  // namespace

absl::StatusOr<Matrix> ReadSphinxFeatures(std::istream& is, const std::string& name, int32_t dim) {
  return CatchAllocation(name, [&] { return ReadFeatures(is, name, dim); });
}

absl::Status WriteSphinxFeatures(const Matrix& m, std::ostream& os) {
  const uint64_t count = m.data.size();
  if (count != uint64_t(m.rows) * uint64_t(m.cols)) {
    return absl::InvalidArgumentError(
        absl::StrCat("matrix ", m.rows, "x", m.cols, " holds ", count, " values"));
  }
  if (count > uint64_t{std::numeric_limits<int32_t>::max()}) {
    return absl::InvalidArgumentError(absl::StrCat(count, " values do not fit a Sphinx header"));
  }
  std::string bytes(4 + 4 * count, '\0');
  StoreWord(static_cast<uint32_t>(count), bytes.data());
  for (uint64_t i = 0; i < count; ++i) {
    StoreWord(std::bit_cast<uint32_t>(m.data[i]), bytes.data() + 4 + 4 * i);
  }
  os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!os) return absl::DataLossError("write failed");
  return absl::OkStatus();
}

}  // namespace gmmscore
