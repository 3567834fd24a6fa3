#include "feat/wave_reader.h"

#include <sndfile.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "formats/table_specifier.h"
#include "util/shared_library.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// libsndfile's virtual I/O over the bytes of one WAVE object held in memory.
struct MemoryFile {
  const std::string* bytes;
  sf_count_t position = 0;
};

sf_count_t MemoryLength(void* user) {
  return static_cast<sf_count_t>(static_cast<MemoryFile*>(user)->bytes->size());
}

sf_count_t MemorySeek(sf_count_t offset, int whence, void* user) {
  auto* f = static_cast<MemoryFile*>(user);
  const sf_count_t size = static_cast<sf_count_t>(f->bytes->size());
  sf_count_t to = offset;
  if (whence == SEEK_CUR) to += f->position;
  if (whence == SEEK_END) to += size;
  f->position = std::clamp<sf_count_t>(to, 0, size);
  return f->position;
}

sf_count_t MemoryRead(void* out, sf_count_t count, void* user) {
  auto* f = static_cast<MemoryFile*>(user);
  const sf_count_t n =
      std::min<sf_count_t>(count, static_cast<sf_count_t>(f->bytes->size()) - f->position);
  std::memcpy(out, f->bytes->data() + f->position, static_cast<size_t>(n));
  f->position += n;
  return n;
}

sf_count_t MemoryWrite(const void*, sf_count_t, void*) { return 0; }

sf_count_t MemoryTell(void* user) { return static_cast<MemoryFile*>(user)->position; }

// Reads up to max_bytes more into bytes, in pieces, so that a size field cannot make us reserve
// memory the input does not have. Returns how many were read.
int64_t ReadUpTo(std::istream& in, int64_t max_bytes, std::string* bytes) {
  constexpr int64_t kPiece = 1 << 20;
  int64_t total = 0;
  while (total < max_bytes && in) {
    const int64_t want = std::min(kPiece, max_bytes - total);
    const size_t old = bytes->size();
    bytes->resize(old + static_cast<size_t>(want));
    in.read(bytes->data() + old, want);
    const int64_t got = in.gcount();
    bytes->resize(old + static_cast<size_t>(got));
    total += got;
    if (got < want) break;
  }
  return total;
}

// sox, writing to a pipe, declares a data chunk of 0x7FFFF000 bytes, so a RIFF chunk this size
// or a little more.
constexpr uint32_t kSoxPipeRiffSize = 0x7FFFF000u;

uint32_t LittleEndian32(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return uint32_t(u[0]) | uint32_t(u[1]) << 8 | uint32_t(u[2]) << 16 | uint32_t(u[3]) << 24;
}

void PutLittleEndian32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

// Writes the sizes a streaming writer could not know into the header held in memory: the RIFF
// chunk's and the data chunk's (libsndfile would read a declared 0 as no data).
void PatchStreamedSizes(std::string* bytes) {
  const size_t total = bytes->size();
  PutLittleEndian32(static_cast<uint32_t>(std::min<size_t>(total - 8, 0xFFFFFFFFu)),
                    bytes->data() + 4);
  size_t at = 12;
  while (at + 8 <= total) {
    const uint32_t size = LittleEndian32(bytes->data() + at + 4);
    if (bytes->compare(at, 4, "data") == 0) {
      PutLittleEndian32(static_cast<uint32_t>(std::min<size_t>(total - at - 8, 0xFFFFFFFFu)),
                        bytes->data() + at + 4);
      return;
    }
    // In size_t: a size near 4 GiB must not wrap to a step of 0 in 32 bits.
    at += 8 + size_t{size} + (size & 1);  // chunks are padded to an even size
  }
}

// The libsndfile functions ReadWave calls, from the library loaded when audio is first read
// (util/shared_library.h: most tools never read audio, and would pay for its load at each start).
struct Sndfile {
  decltype(&sf_open_virtual) open_virtual;
  decltype(&sf_strerror) strerror;
  decltype(&sf_readf_double) readf_double;
  decltype(&sf_close) close;
};

absl::StatusOr<Sndfile> LoadSndfile() {
  GMM_ASSIGN_OR_RETURN(SharedLibrary library,
                       SharedLibrary::Open("libsndfile.so.1", "reading audio",
                                           "Debian: apt-get install libsndfile1"));
  Sndfile f;
  GMM_RETURN_IF_ERROR(library.Load("sf_open_virtual", &f.open_virtual));
  GMM_RETURN_IF_ERROR(library.Load("sf_strerror", &f.strerror));
  GMM_RETURN_IF_ERROR(library.Load("sf_readf_double", &f.readf_double));
  GMM_RETURN_IF_ERROR(library.Load("sf_close", &f.close));
  return f;
}

const absl::StatusOr<Sndfile>& GetSndfile() {
  static const absl::StatusOr<Sndfile> sndfile = LoadSndfile();
  return sndfile;
}

}  // namespace

absl::StatusOr<WaveData> ReadWave(std::istream& in, const std::string& name) {
  std::string bytes;
  if (ReadUpTo(in, 12, &bytes) < 12 || bytes.compare(0, 4, "RIFF") != 0 ||
      bytes.compare(8, 4, "WAVE") != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": not a WAVE file (no RIFF....WAVE header in its first 12 bytes)"));
  }
  const uint32_t riff_size = LittleEndian32(bytes.data() + 4);
  // A writer to a pipe cannot go back to fill in the size, and writes 0, 0xFFFFFFFF or (sox)
  // a size just under 2 GiB: then the object runs to the end of the input.
  const bool size_unknown = riff_size == 0 || riff_size >= kSoxPipeRiffSize;
  const int64_t rest = size_unknown ? kMaxWaveBytes - 12 : int64_t{riff_size} - 4;
  const int64_t got = ReadUpTo(in, rest, &bytes);
  if (!size_unknown && got < rest) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": truncated WAVE file: its header says ",
                                                   int64_t{riff_size} + 8, " bytes, the input has ",
                                                   got + 12));
  }
  if (size_unknown && got == rest && in.peek() != std::char_traits<char>::eof()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": WAVE data of unknown size is over the limit of ", kMaxWaveBytes, " bytes"));
  }

  if (size_unknown) PatchStreamedSizes(&bytes);

  const absl::StatusOr<Sndfile>& sndfile = GetSndfile();
  if (!sndfile.ok()) return sndfile.status();
  MemoryFile file{&bytes};
  SF_VIRTUAL_IO io{MemoryLength, MemorySeek, MemoryRead, MemoryWrite, MemoryTell};
  SF_INFO info{};
  SNDFILE* sf = sndfile->open_virtual(&io, SFM_READ, &info, &file);
  if (sf == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": cannot read the WAVE data: ", sndfile->strerror(nullptr)));
  }
  if ((info.format & SF_FORMAT_TYPEMASK) != SF_FORMAT_WAV &&
      (info.format & SF_FORMAT_TYPEMASK) != SF_FORMAT_WAVEX) {
    sndfile->close(sf);
    return absl::InvalidArgumentError(absl::StrCat(name, ": not a RIFF WAVE file"));
  }
  if (info.channels <= 0 || info.samplerate <= 0 || info.frames < 0) {
    sndfile->close(sf);
    return absl::InvalidArgumentError(absl::StrCat(name, ": bad WAVE header (", info.channels,
                                                   " channels at ", info.samplerate, " Hz)"));
  }
  // Samples on the 16-bit scale: libsndfile's normalised doubles times 32768 are the 16-bit
  // integers exactly, and other sample formats land on the same scale.
  std::vector<double> interleaved(static_cast<size_t>(info.frames) * info.channels);
  const sf_count_t frames = sndfile->readf_double(sf, interleaved.data(), info.frames);
  sndfile->close(sf);
  if (frames != info.frames) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": truncated WAVE data: read ", frames,
                                                   " of ", info.frames, " sample frames"));
  }
  WaveData wave;
  wave.sample_rate = info.samplerate;
  wave.channels.assign(info.channels, std::vector<float>(static_cast<size_t>(frames)));
  for (sf_count_t i = 0; i < frames; ++i) {
    for (int c = 0; c < info.channels; ++c) {
      wave.channels[c][i] = static_cast<float>(interleaved[i * info.channels + c] * 32768.0);
    }
  }
  return wave;
}

absl::StatusOr<std::unique_ptr<WaveTableReader>> WaveTableReader::Open(
    const std::string& rspecifier) {
  GMM_ASSIGN_OR_RETURN(TableSpecifier spec, ParseRspecifier(rspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TableEntryReader> entries, TableEntryReader::Open(spec));
  return std::unique_ptr<WaveTableReader>(new WaveTableReader(std::move(entries)));
}

absl::StatusOr<bool> WaveTableReader::Next(std::string* key, WaveData* wave) {
  GMM_ASSIGN_OR_RETURN(const bool more, entries_->Next(key));
  if (!more) return false;
  GMM_ASSIGN_OR_RETURN(*wave, ReadWave(entries_->object(), entries_->object_name()));
  return true;
}

}  // namespace gmmscore
