#include "formats/htk_features.h"

#include <array>
#include <bit>
#include <limits>

#include "absl/strings/str_cat.h"
#include "formats/read_limits.h"

namespace gmmscore {
namespace {

constexpr int kHeaderBytes = 12;
constexpr uint16_t kBaseKindMask = 077;
constexpr uint16_t kCompressed = 02000;  // _C
constexpr uint16_t kCrc = 010000;        // _K
constexpr uint16_t kWaveform = 0;
constexpr uint16_t kIrefc = 5;
constexpr uint16_t kDiscrete = 10;
constexpr uint16_t kAnon = 12;  // the last base kind

uint32_t LoadBigEndian(const char* p, int bytes) {
  uint32_t value = 0;
  for (int i = 0; i < bytes; ++i) value = (value << 8) | static_cast<unsigned char>(p[i]);
  return value;
}

void StoreBigEndian(uint32_t value, int bytes, char* p) {
  for (int i = 0; i < bytes; ++i) {
    p[i] = static_cast<char>((value >> (8 * (bytes - 1 - i))) & 0xffu);
  }
}

// Whether frames of this kind are float vectors; an error saying why not otherwise.
absl::Status CheckBaseKind(uint16_t kind) {
  const uint16_t base = kind & kBaseKindMask;
  if (base == kWaveform) {
    return absl::InvalidArgumentError("WAVEFORM files hold samples, not features");
  }
  if (base == kIrefc || base == kDiscrete) {
    return absl::InvalidArgumentError(absl::StrCat(base == kIrefc ? "IREFC" : "DISCRETE",
                                                   " files hold 16-bit integers, not floats"));
  }
  if (base > kAnon) {
    return absl::InvalidArgumentError(absl::StrCat("unknown parameter kind ", base));
  }
  if (kind & kCompressed) {
    return absl::InvalidArgumentError("compressed (_C) parameter files are not supported");
  }
  return absl::OkStatus();
}

absl::Status ReadError(const std::string& name, int64_t offset, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": byte ", offset, ": ", what));
}

// Reads `num_frames` frames of `frame_bytes` after the header, one at a time so that a corrupt
// count cannot make us allocate more than the file holds.
absl::StatusOr<Matrix> ReadFrames(std::istream& is, const std::string& name, int32_t num_frames,
                                  int32_t frame_bytes) {
  Matrix m;
  m.cols = frame_bytes / 4;
  std::string frame(frame_bytes, '\0');
  for (; m.rows < num_frames; ++m.rows) {
    is.read(frame.data(), frame_bytes);
    if (is.gcount() != frame_bytes) {
      return ReadError(name, kHeaderBytes + int64_t{m.rows} * frame_bytes + is.gcount(),
                       absl::StrCat("truncated: the header says ", num_frames, " frames of ",
                                    frame_bytes, " bytes, the file holds ", m.rows));
    }
    for (int32_t d = 0; d < m.cols; ++d) {
      m.data.push_back(std::bit_cast<float>(LoadBigEndian(frame.data() + 4 * d, 4)));
    }
  }
  return m;
}

absl::StatusOr<Matrix> ReadFeatures(std::istream& is, const std::string& name) {
  std::array<char, kHeaderBytes> header;
  is.read(header.data(), kHeaderBytes);
  if (is.gcount() != kHeaderBytes) {
    return ReadError(name, is.gcount(),
                     absl::StrCat("truncated header: ", is.gcount(), " of 12 bytes"));
  }
  const auto num_frames = static_cast<int32_t>(LoadBigEndian(header.data(), 4));
  const auto frame_bytes = static_cast<int16_t>(LoadBigEndian(header.data() + 8, 2));
  const auto kind = static_cast<uint16_t>(LoadBigEndian(header.data() + 10, 2));
  if (num_frames < 0) {
    return ReadError(name, 0, absl::StrCat("negative number of frames ", num_frames));
  }
  if (frame_bytes <= 0 || frame_bytes % 4 != 0) {
    return ReadError(
        name, 8,
        absl::StrCat("frame size ", frame_bytes, " bytes is not a positive multiple of 4"));
  }
  if (absl::Status s = CheckBaseKind(kind); !s.ok()) return ReadError(name, 10, s.message());
  auto m = ReadFrames(is, name, num_frames, frame_bytes);
  if (is.bad()) return absl::DataLossError(absl::StrCat(name, ": read failed"));
  return m;
}

}  // namespace

absl::StatusOr<Matrix> ReadHtkFeatures(std::istream& is, const std::string& name) {
  return CatchAllocation(name, [&] { return ReadFeatures(is, name); });
}

absl::Status WriteHtkFeatures(const Matrix& m, std::ostream& os, int16_t parm_kind,
                              int32_t samp_period) {
  const auto kind = static_cast<uint16_t>(parm_kind);
  if (absl::Status s = CheckBaseKind(kind); !s.ok()) return s;
  if (kind & kCrc) return absl::InvalidArgumentError("writing CRCs (_K) is not supported");
  if (m.cols < 1 || m.cols > std::numeric_limits<int16_t>::max() / 4 || m.rows < 0 ||
      m.data.size() != size_t(m.rows) * size_t(m.cols)) {
    return absl::InvalidArgumentError(absl::StrCat("a matrix ", m.rows, "x", m.cols, " holding ",
                                                   m.data.size(), " values is no HTK file"));
  }
  std::string bytes(kHeaderBytes + 4 * m.data.size(), '\0');
  StoreBigEndian(static_cast<uint32_t>(m.rows), 4, bytes.data());
  StoreBigEndian(static_cast<uint32_t>(samp_period), 4, bytes.data() + 4);
  StoreBigEndian(static_cast<uint32_t>(4 * m.cols), 2, bytes.data() + 8);
  StoreBigEndian(kind, 2, bytes.data() + 10);
  for (size_t i = 0; i < m.data.size(); ++i) {
    StoreBigEndian(std::bit_cast<uint32_t>(m.data[i]), 4, bytes.data() + kHeaderBytes + 4 * i);
  }
  os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!os) return absl::DataLossError("write failed");
  return absl::OkStatus();
}

}  // namespace gmmscore
