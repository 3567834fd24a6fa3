#include "formats/native_model.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_model.h"
#include "formats/read_limits.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr size_t kAlign = 64;
constexpr uint32_t kFlagHmm = 1;
constexpr uint32_t kFlagNames = 2;

struct NativeHeader {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  int32_t dim;
  int32_t num_states;
  int64_t num_gauss;
  uint64_t payload_bytes;
  uint32_t payload_crc;
  uint32_t flags;
  float variance_floor;
  char pad[12];
};
static_assert(sizeof(NativeHeader) == 64);

uint32_t Crc32(const char* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) {  // zlib takes uInt lengths
    const uInt chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), chunk);
    data += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

class PayloadWriter {
 public:
  template <class T>
  void Array(const std::vector<T>& v) {
    Append(v.data(), v.size() * sizeof(T));
    Pad();
  }
  void String(const std::string& s) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    Append(&n, 4);
    Append(s.data(), s.size());
  }
  void Pad() { bytes_.resize((bytes_.size() + kAlign - 1) / kAlign * kAlign, '\0'); }
  const std::string& bytes() const { return bytes_; }

 private:
  void Append(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

class PayloadReader {
 public:
  PayloadReader(const std::string& bytes, std::string path)
      : bytes_(bytes), path_(std::move(path)) {}

  template <class T>
  absl::Status Array(uint64_t count, std::vector<T>* out, const char* what) {
    if (count > (bytes_.size() - pos_) / sizeof(T)) return Truncated(what);
    const size_t n = static_cast<size_t>(count) * sizeof(T);
    out->resize(static_cast<size_t>(count));
    std::memcpy(out->data(), bytes_.data() + pos_, n);
    pos_ += n;
    pos_ = std::min(bytes_.size(), (pos_ + kAlign - 1) / kAlign * kAlign);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> String(const char* what) {
    uint32_t n = 0;
    if (4 > bytes_.size() - pos_) return Truncated(what);
    std::memcpy(&n, bytes_.data() + pos_, 4);
    pos_ += 4;
    if (n > bytes_.size() - pos_) return Truncated(what);
    std::string s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  absl::Status Truncated(const char* what) {
    return absl::InvalidArgumentError(absl::StrCat(path_, ": byte ", sizeof(NativeHeader) + pos_,
                                                   ": payload ends inside ", what));
  }
  const std::string& bytes_;
  std::string path_;
  size_t pos_ = 0;
};

}  // namespace

absl::Status WriteNativeModel(const GmmModel& model, const std::string& path) {
  const GmmModelSpec& spec = model.spec();
  PayloadWriter payload;
  payload.Array(spec.gauss_begin);
  payload.Array(spec.weights);
  payload.Array(spec.means);
  payload.Array(spec.variances);
  payload.String(spec.source_format);
  uint32_t flags = 0;
  if (!spec.state_names.empty()) {
    flags |= kFlagNames;
    for (const std::string& name : spec.state_names) payload.String(name);
  }
  if (!spec.hmm.empty()) {
    flags |= kFlagHmm;
    std::ostringstream hmm;
    KaldiWriter writer(hmm, /*binary=*/true);
    WriteKaldiTransitionModel(spec.hmm, writer);
    payload.String(hmm.str());
  }
  payload.Pad();

  NativeHeader h{};
  std::memcpy(h.magic, kNativeMagic, sizeof(h.magic));
  h.version = kNativeVersion;
  h.header_bytes = sizeof(NativeHeader);
  h.dim = spec.dim;
  h.num_states = model.num_states();
  h.num_gauss = model.num_gauss();
  h.payload_bytes = payload.bytes().size();
  h.payload_crc = Crc32(payload.bytes().data(), payload.bytes().size());
  h.flags = flags;
  h.variance_floor = spec.variance_floor;

  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  if (!os) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot open for writing"));
  os.write(reinterpret_cast<const char*>(&h), sizeof(h));
  os.write(payload.bytes().data(), std::streamsize(payload.bytes().size()));
  os.close();
  if (!os) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

namespace {

uint64_t Padded(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// The fewest payload bytes that the header's counts need: the four arrays, each padded, and the
// length of the source format. False where that overflows 64 bits.
bool MinPayloadBytes(const NativeHeader& h, uint64_t* out) {
  uint64_t values = 0, value_bytes = 0;
  if (!CheckedMul(uint64_t(h.num_gauss), uint64_t(h.dim), &values) ||
      !CheckedMul(values, sizeof(float), &value_bytes) || value_bytes > (uint64_t(1) << 62) ||
      uint64_t(h.num_gauss) > (uint64_t(1) << 60)) {
    return false;
  }
  *out = Padded(4 * (uint64_t(h.num_states) + 1)) + Padded(4 * uint64_t(h.num_gauss)) +
         2 * Padded(value_bytes) + 4;
  return true;
}

// Reads up to `n` bytes, in chunks where the stream's size is unknown so that a size that lies
// costs about what the stream holds.
std::string ReadUpTo(std::istream& is, uint64_t n, bool size_known) {
  std::string out;
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  while (out.size() < n) {
    const size_t had = out.size();
    const size_t chunk = size_known ? size_t(n) - had : size_t(std::min(kChunk, n - had));
    out.resize(had + chunk);
    is.read(out.data() + had, std::streamsize(chunk));
    out.resize(had + size_t(is.gcount()));
    if (size_t(is.gcount()) != chunk) break;
  }
  return out;
}

absl::StatusOr<GmmModel> ReadModel(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  if (!is) return absl::NotFoundError(absl::StrCat(path, ": cannot open for reading"));
  NativeHeader h{};
  is.read(reinterpret_cast<char*>(&h), sizeof(h));
  if (is.gcount() != sizeof(h)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": byte ", is.gcount(), ": file ends inside the 64-byte header"));
  }
  if (std::memcmp(h.magic, kNativeMagic, sizeof(h.magic)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": byte 0: bad magic, not a gmmscore model"));
  }
  if (h.version != kNativeVersion) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": byte 8: unsupported version ",
                                                   h.version, " (this build reads ", kNativeVersion,
                                                   ")"));
  }
  if (h.header_bytes != sizeof(NativeHeader)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": byte 12: header length ",
                                                   h.header_bytes, ", version ", kNativeVersion,
                                                   " has ", sizeof(NativeHeader)));
  }
  if (h.dim < 1 || h.num_states < 1 || h.num_gauss < h.num_states ||
      uint64_t(h.num_gauss) > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": byte 16: bad header counts (dim ",
                                                   h.dim, ", states ", h.num_states, ", Gaussians ",
                                                   h.num_gauss, ")"));
  }
  // The sizes against the file before anything is read or sized by them.
  const std::streamoff here = is.tellg();
  is.seekg(0, std::ios::end);
  const std::streamoff end = is.tellg();
  is.clear();
  is.seekg(here);
  const bool size_known = here >= 0 && end >= here;
  const uint64_t file_left = size_known ? uint64_t(end - here) : 0;
  if (size_known && h.payload_bytes > file_left) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": byte 32: file is truncated: the header says the payload is ",
                     h.payload_bytes, " bytes, the file has ", file_left, " after the header"));
  }
  uint64_t min_payload = 0;
  if (!MinPayloadBytes(h, &min_payload) || min_payload > h.payload_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": byte 16: header counts (dim ", h.dim, ", states ", h.num_states, ", Gaussians ",
        h.num_gauss, ") do not fit the payload of ", h.payload_bytes, " bytes"));
  }
  const std::string payload = ReadUpTo(is, h.payload_bytes, size_known);
  if (payload.size() != h.payload_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": byte ", sizeof(h) + payload.size(),
                                                   ": file is truncated (expected ",
                                                   sizeof(h) + h.payload_bytes, " bytes)"));
  }
  const uint32_t crc = Crc32(payload.data(), payload.size());
  if (crc != h.payload_crc) {
    return absl::DataLossError(absl::StrCat(path, ": byte 40: checksum mismatch (header ",
                                            h.payload_crc, ", payload ", crc,
                                            "): file is corrupt"));
  }
  GmmModelSpec spec;
  spec.dim = h.dim;
  spec.variance_floor = h.variance_floor;
  PayloadReader in(payload, path);
  const uint64_t values = uint64_t(h.num_gauss) * uint64_t(h.dim);  // checked above
  GMM_RETURN_IF_ERROR(in.Array(uint64_t(h.num_states) + 1, &spec.gauss_begin, "Gaussian ranges"));
  GMM_RETURN_IF_ERROR(in.Array(uint64_t(h.num_gauss), &spec.weights, "weights"));
  GMM_RETURN_IF_ERROR(in.Array(values, &spec.means, "means"));
  GMM_RETURN_IF_ERROR(in.Array(values, &spec.variances, "variances"));
  GMM_ASSIGN_OR_RETURN(spec.source_format, in.String("source format"));
  if (h.flags & kFlagNames) {
    // Each name takes at least its 4-byte length.
    spec.state_names.reserve(std::min(size_t(h.num_states), in.left() / 4));
    for (int32_t s = 0; s < h.num_states; ++s) {
      GMM_ASSIGN_OR_RETURN(std::string name, in.String("state names"));
      spec.state_names.push_back(std::move(name));
    }
  }
  if (h.flags & kFlagHmm) {
    GMM_ASSIGN_OR_RETURN(std::string hmm, in.String("HMM"));
    std::istringstream hmm_stream(hmm);
    KaldiReader reader(hmm_stream, absl::StrCat(path, " (HMM section)"), /*binary=*/true);
    GMM_ASSIGN_OR_RETURN(spec.hmm, ReadKaldiTransitionModel(reader));
  }
  auto model = GmmModel::Create(std::move(spec));
  if (!model.ok())
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", model.status().message()));
  return model;
}

}  // namespace

absl::StatusOr<GmmModel> ReadNativeModel(const std::string& path) {
  return CatchAllocation(path, [&] { return ReadModel(path); });
}

}  // namespace gmmscore
