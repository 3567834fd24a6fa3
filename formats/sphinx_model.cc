// Reader and writer of Sphinx continuous models (see sphinx_model.h for the mapping).
#include "formats/sphinx_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "kernels/util/status_macros.h"

namespace gmmscore {
namespace {

constexpr uint32_t kByteOrderMagic = 0x11223344;
// Rows of weights or probabilities whose sum is this close to 1 are already normalised: float
// rounding of normalised values stays far below it, and rescaling them would change their bits.
constexpr double kNormalisedTolerance = 1e-6;

absl::Status ByteError(const std::string& path, uint64_t offset, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": byte ", offset, ": ", what));
}

absl::Status LineError(const std::string& path, int32_t line, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": line ", line, ": ", what));
}

absl::Status Unsupported(const std::string& path, absl::string_view what) {
  return absl::UnimplementedError(
      absl::StrCat(path, ": unsupported Sphinx model: ", what,
                   "; only fully continuous single-stream models can be read"));
}

std::string Hex(uint32_t v) { return absl::StrCat("0x", absl::Hex(v, absl::kZeroPad8)); }

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  if (!is) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::string bytes{std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>()};
  if (is.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return bytes;
}

absl::Status WriteWholeFile(const std::string& path, const std::string& bytes) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  os.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  os.close();
  if (!os) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

std::string FilePathIn(const std::string& dir, const char* name) {
  return (std::filesystem::path(dir) / name).string();
}

uint32_t LoadWord(const char* p, bool big_endian) {
  uint32_t w = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t byte = static_cast<unsigned char>(p[big_endian ? i : 3 - i]);
    w = (w << 8) | byte;
  }
  return w;
}

void AppendWord(uint32_t w, std::string& out) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((w >> (8 * i)) & 0xffu));
}

// sphinxbase's running checksum (bio.c) over 4-byte elements: rotate left by 20, then add.
uint32_t AccumulateChecksum(uint32_t sum, uint32_t word) { return std::rotl(sum, 20) + word; }

// An s3 binary file, read whole: a text header "s3\n" ... "endhdr\n", the byte-order magic, then
// 4-byte elements in the magic's byte order, and a checksum of them when the header has chksum0.
class S3Reader {
 public:
  static absl::StatusOr<S3Reader> Open(const std::string& path) {
    GMM_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
    S3Reader in(path, std::move(bytes));
    GMM_RETURN_IF_ERROR(in.ReadHeader());
    return in;
  }

  const std::string& path() const { return path_; }
  uint64_t offset() const { return pos_; }
  absl::Status Error(uint64_t offset, absl::string_view what) const {
    return ByteError(path_, offset, what);
  }

  absl::StatusOr<int32_t> Int32(absl::string_view what) {
    GMM_RETURN_IF_ERROR(Need(1, what));
    return std::bit_cast<int32_t>(Element());
  }

  absl::StatusOr<std::vector<float>> Floats(uint64_t n, absl::string_view what) {
    GMM_RETURN_IF_ERROR(Need(n, what));
    std::vector<float> values(n);
    for (float& v : values) v = std::bit_cast<float>(Element());
    return values;
  }

  // Verifies the checksum, if the file has one, and that nothing follows.
  absl::Status Finish() {
    if (has_checksum_) {
      GMM_RETURN_IF_ERROR(Need(1, "the checksum"));
      const uint64_t at = pos_;
      const uint32_t stored = LoadWord(&bytes_[pos_], big_endian_);
      pos_ += 4;
      if (stored != checksum_) {
        return Error(at, absl::StrCat("checksum ", Hex(stored), " does not match ", Hex(checksum_),
                                      " computed from the data"));
      }
    }
    if (pos_ != bytes_.size()) {
      return Error(pos_, absl::StrCat(bytes_.size() - pos_, " unexpected bytes after the data"));
    }
    return absl::OkStatus();
  }

 private:
  S3Reader(std::string path, std::string bytes)
      : path_(std::move(path)), bytes_(std::move(bytes)) {}

  absl::StatusOr<absl::string_view> Line() {
    const size_t end = bytes_.find('\n', pos_);
    if (end == std::string::npos) return Error(pos_, "the header has no endhdr line");
    const absl::string_view line(bytes_.data() + pos_, end - pos_);
    pos_ = end + 1;
    return line;
  }

  absl::Status ReadHeader() {
    GMM_ASSIGN_OR_RETURN(absl::string_view first, Line());
    if (first != "s3") return Error(0, "not an s3 file (the first line is not \"s3\")");
    while (true) {
      const uint64_t at = pos_;
      GMM_ASSIGN_OR_RETURN(absl::string_view line, Line());
      const std::vector<absl::string_view> words =
          absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
      if (words.empty()) return Error(at, "empty header line");
      if (words[0] == "endhdr") break;
      if (words[0] == "chksum0") has_checksum_ = true;
    }
    if (bytes_.size() - pos_ < 4) return Error(pos_, "truncated before the byte-order magic");
    const uint32_t magic = LoadWord(&bytes_[pos_], false);
    big_endian_ = magic != kByteOrderMagic;
    if (big_endian_ && LoadWord(&bytes_[pos_], true) != kByteOrderMagic) {
      return Error(pos_, absl::StrCat("bad byte-order magic ", Hex(magic), ", expected ",
                                      Hex(kByteOrderMagic), " in either byte order"));
    }
    pos_ += 4;
    return absl::OkStatus();
  }

  absl::Status Need(uint64_t elements, absl::string_view what) const {
    const uint64_t left = bytes_.size() - pos_;
    if (elements > left / 4) {
      return Error(pos_, absl::StrCat("truncated: reading ", what, " takes ", elements * 4,
                                      " bytes, the file has ", left, " left"));
    }
    return absl::OkStatus();
  }

  uint32_t Element() {
    const uint32_t w = LoadWord(&bytes_[pos_], big_endian_);
    pos_ += 4;
    checksum_ = AccumulateChecksum(checksum_, w);
    return w;
  }

  std::string path_;
  std::string bytes_;
  uint64_t pos_ = 0;
  bool big_endian_ = false;
  bool has_checksum_ = false;
  uint32_t checksum_ = 0;
};

// "s3" header, magic, the dimensions, the element count, the values and the checksum.
std::string S3Bytes(const std::vector<int32_t>& dims, const std::vector<float>& values) {
  std::string out = "s3\nversion 1.0\nchksum0 yes\n";
  const std::string endhdr = "endhdr\n";
  out.append((4 - (out.size() + endhdr.size()) % 4) % 4, ' ');  // align the data, as SphinxTrain
  out += endhdr;
  AppendWord(kByteOrderMagic, out);
  uint32_t checksum = 0;
  const auto put = [&](uint32_t w) {
    AppendWord(w, out);
    checksum = AccumulateChecksum(checksum, w);
  };
  for (int32_t d : dims) put(static_cast<uint32_t>(d));
  put(static_cast<uint32_t>(values.size()));
  for (float v : values) put(std::bit_cast<uint32_t>(v));
  AppendWord(checksum, out);
  return out;
}

absl::StatusOr<int32_t> PositiveInt32(S3Reader& in, absl::string_view what) {
  const uint64_t at = in.offset();
  GMM_ASSIGN_OR_RETURN(int32_t v, in.Int32(what));
  if (v < 1) return in.Error(at, absl::StrCat("bad ", what, " ", v));
  return v;
}

// The element count that precedes the values, checked against the dimensions, then the values.
absl::StatusOr<std::vector<float>> ReadValues(S3Reader& in, uint64_t expected) {
  const uint64_t at = in.offset();
  GMM_ASSIGN_OR_RETURN(int32_t count, in.Int32("the element count"));
  if (count < 0 || uint64_t(count) != expected) {
    return in.Error(at, absl::StrCat("element count ", count, " does not match the dimensions (",
                                     expected, ")"));
  }
  return in.Floats(expected, "the values");
}

absl::Status RejectStreams(S3Reader& in, int32_t n_feat) {
  if (n_feat == 1) return absl::OkStatus();
  return Unsupported(in.path(), absl::StrCat(n_feat, " feature streams"));
}

// means or variances: [codebook][density][dimension], one feature stream.
struct Gauden {
  int32_t n_mgau = 0;
  int32_t n_density = 0;
  int32_t veclen = 0;
  uint64_t data_offset = 0;
  std::vector<float> data;
};

absl::StatusOr<Gauden> ReadGauden(const std::string& path) {
  GMM_ASSIGN_OR_RETURN(S3Reader in, S3Reader::Open(path));
  Gauden g;
  GMM_ASSIGN_OR_RETURN(g.n_mgau, PositiveInt32(in, "number of codebooks"));
  GMM_ASSIGN_OR_RETURN(int32_t n_feat, PositiveInt32(in, "number of feature streams"));
  GMM_ASSIGN_OR_RETURN(g.n_density, PositiveInt32(in, "number of densities"));
  GMM_RETURN_IF_ERROR(RejectStreams(in, n_feat));
  GMM_ASSIGN_OR_RETURN(g.veclen, PositiveInt32(in, "vector length"));
  g.data_offset = in.offset() + 4;
  GMM_ASSIGN_OR_RETURN(g.data, ReadValues(in, uint64_t(g.n_mgau) * g.n_density * g.veclen));
  GMM_RETURN_IF_ERROR(in.Finish());
  return g;
}

// Means must be finite, variances finite and > 0.
absl::Status CheckGauden(const std::string& path, const Gauden& g, bool variances) {
  for (size_t i = 0; i < g.data.size(); ++i) {
    const float v = g.data[i];
    if (std::isfinite(v) && (!variances || v > 0.0f)) continue;
    const size_t d = i % g.veclen, density = i / g.veclen % g.n_density;
    return ByteError(path, g.data_offset + 4 * i,
                     absl::StrCat("codebook ", i / g.veclen / g.n_density, ", density ", density,
                                  ", dimension ", d, ": ", variances ? "variance " : "mean ", v,
                                  variances ? " is not a finite number > 0" : " is not finite"));
  }
  return absl::OkStatus();
}

// Rows of `row_len` values that must be finite and >= 0, not all 0; each is scaled to sum to 1
// unless it already does. `row_label(r)` and `column` name a value in errors.
template <typename RowLabel>
absl::Status NormaliseRows(const std::string& path, uint64_t data_offset, size_t row_len,
                           std::vector<float>& data, RowLabel row_label, absl::string_view column,
                           absl::string_view value) {
  for (size_t r = 0; r * row_len < data.size(); ++r) {
    float* row = &data[r * row_len];
    double sum = 0.0;
    for (size_t c = 0; c < row_len; ++c) {
      if (!(row[c] >= 0.0f) || !std::isfinite(row[c])) {
        return ByteError(path, data_offset + 4 * (r * row_len + c),
                         absl::StrCat(row_label(r), ", ", column, " ", c, ": ", value, " ", row[c],
                                      row[c] < 0.0f ? " is negative" : " is not finite"));
      }
      sum += row[c];
    }
    if (sum == 0.0) {
      return ByteError(path, data_offset + 4 * r * row_len,
                       absl::StrCat(row_label(r), ": every ", value, " is 0"));
    }
    if (std::abs(sum - 1.0) <= kNormalisedTolerance) continue;
    for (size_t c = 0; c < row_len; ++c) row[c] = static_cast<float>(row[c] / sum);
  }
  return absl::OkStatus();
}

// mixture_weights: [senone][density], normalised per senone.
struct MixtureWeights {
  int32_t n_senone = 0;
  int32_t n_density = 0;
  std::vector<float> data;
};

absl::StatusOr<MixtureWeights> ReadMixtureWeights(const std::string& path) {
  GMM_ASSIGN_OR_RETURN(S3Reader in, S3Reader::Open(path));
  MixtureWeights w;
  GMM_ASSIGN_OR_RETURN(w.n_senone, PositiveInt32(in, "number of senones"));
  GMM_ASSIGN_OR_RETURN(int32_t n_feat, PositiveInt32(in, "number of feature streams"));
  GMM_RETURN_IF_ERROR(RejectStreams(in, n_feat));
  GMM_ASSIGN_OR_RETURN(w.n_density, PositiveInt32(in, "number of densities"));
  const uint64_t data_offset = in.offset() + 4;
  GMM_ASSIGN_OR_RETURN(w.data, ReadValues(in, uint64_t(w.n_senone) * w.n_density));
  GMM_RETURN_IF_ERROR(in.Finish());
  GMM_RETURN_IF_ERROR(NormaliseRows(
      path, data_offset, w.n_density, w.data, [](size_t s) { return absl::StrCat("senone ", s); },
      "density", "mixture weight"));
  return w;
}

// Continuous models have a codebook per senone; fewer codebooks are shared (tied) mixtures.
absl::Status CheckContinuous(const std::string& means_path, const Gauden& means,
                             const std::string& weights_path, const MixtureWeights& weights) {
  if (means.n_mgau == weights.n_senone) {
    if (means.n_density == weights.n_density) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(weights_path, ": ", weights.n_density,
                                                   " weights per senone for ", means.n_density,
                                                   " densities per codebook in ", means_path));
  }
  const std::string shared =
      absl::StrCat(means.n_mgau, means.n_mgau == 1 ? " codebook" : " codebooks", " shared by ",
                   weights.n_senone, " senones");
  if (means.n_mgau == 1) {
    return Unsupported(means_path, absl::StrCat("semi-continuous model (", shared, ")"));
  }
  if (means.n_mgau < weights.n_senone) {
    return Unsupported(means_path, absl::StrCat("phonetically tied mixtures (", shared, ")"));
  }
  return absl::InvalidArgumentError(absl::StrCat(means_path, ": ", means.n_mgau, " codebooks, but ",
                                                 weights_path, " has ", weights.n_senone,
                                                 " senones"));
}

// transition_matrices: [matrix][from emitting state][to state, the last one final].
struct Tmats {
  int32_t n_tmat = 0;
  int32_t n_emit = 0;
  std::vector<float> probs;

  float prob(int32_t t, int32_t from, int32_t to) const {
    return probs[(size_t(t) * n_emit + from) * (n_emit + 1) + to];
  }
};

absl::StatusOr<Tmats> ReadTmats(const std::string& path) {
  GMM_ASSIGN_OR_RETURN(S3Reader in, S3Reader::Open(path));
  Tmats t;
  GMM_ASSIGN_OR_RETURN(t.n_tmat, PositiveInt32(in, "number of matrices"));
  GMM_ASSIGN_OR_RETURN(t.n_emit, PositiveInt32(in, "number of source states"));
  const uint64_t cols_at = in.offset();
  GMM_ASSIGN_OR_RETURN(int32_t n_cols, in.Int32("number of destination states"));
  if (n_cols != t.n_emit + 1) {
    return in.Error(cols_at, absl::StrCat(n_cols, " destination states for ", t.n_emit,
                                          " source states; expected one more (the final)"));
  }
  const uint64_t data_offset = in.offset() + 4;
  GMM_ASSIGN_OR_RETURN(t.probs, ReadValues(in, uint64_t(t.n_tmat) * t.n_emit * n_cols));
  GMM_RETURN_IF_ERROR(in.Finish());
  const int32_t n_emit = t.n_emit;
  GMM_RETURN_IF_ERROR(NormaliseRows(
      path, data_offset, n_cols, t.probs,
      [n_emit](size_t r) { return absl::StrCat("matrix ", r / n_emit, ", row ", r % n_emit); },
      "column", "transition probability"));
  return t;
}

// One mdef row: a base (CI) phone, or a triphone with its contexts and word position.
struct MdefPhone {
  std::string base;
  std::string left = "-";
  std::string right = "-";
  std::string position = "-";
  bool filler = false;
  int32_t tmat = 0;
  std::vector<int32_t> senones;  // one per emitting state
  int32_t line = 0;              // where it was read
  bool is_base() const { return left == "-"; }
};

struct Mdef {
  int32_t n_base = 0;
  int32_t n_tied_state = 0;
  int32_t n_tied_ci_state = 0;
  int32_t n_tied_tmat = 0;
  int32_t n_emit = 0;
  std::vector<MdefPhone> phones;  // base phones first
};

// The lines of a text file that are neither blank nor comments, with their line numbers.
class TextLines {
 public:
  explicit TextLines(const std::string& text) : text_(text) {}
  bool Next(std::vector<absl::string_view>* words) {
    while (pos_ < text_.size()) {
      size_t end = text_.find('\n', pos_);
      if (end == std::string::npos) end = text_.size();
      const absl::string_view line(text_.data() + pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      *words = absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
      if (!words->empty() && (*words)[0][0] != '#') return true;
    }
    return false;
  }
  int32_t line() const { return line_; }

 private:
  const std::string& text_;
  size_t pos_ = 0;
  int32_t line_ = 0;
};

// The six "N name" header lines, in any order.
absl::Status ParseMdefHeader(const std::string& path, TextLines& lines, Mdef& mdef, int32_t* n_tri,
                             int32_t* n_state_map) {
  const std::map<absl::string_view, int32_t*> fields = {{"n_base", &mdef.n_base},
                                                        {"n_tri", n_tri},
                                                        {"n_state_map", n_state_map},
                                                        {"n_tied_state", &mdef.n_tied_state},
                                                        {"n_tied_ci_state", &mdef.n_tied_ci_state},
                                                        {"n_tied_tmat", &mdef.n_tied_tmat}};
  std::set<absl::string_view> seen;
  std::vector<absl::string_view> words;
  while (seen.size() < fields.size()) {
    if (!lines.Next(&words)) return LineError(path, lines.line(), "the header is incomplete");
    const auto field = words.size() == 2 ? fields.find(words[1]) : fields.end();
    if (field == fields.end() || !absl::SimpleAtoi(words[0], field->second) || *field->second < 0) {
      return LineError(path, lines.line(),
                       "expected a header line \"N name\", name one of n_base, n_tri, "
                       "n_state_map, n_tied_state, n_tied_ci_state and n_tied_tmat");
    }
    seen.insert(field->first);
  }
  const int64_t n_phones = int64_t{mdef.n_base} + *n_tri;
  if (mdef.n_base < 1 || *n_state_map % n_phones != 0 || *n_state_map / n_phones < 2) {
    return LineError(path, lines.line(),
                     absl::StrCat("n_state_map ", *n_state_map, " is not a multiple (> 1) of the ",
                                  n_phones, " phones (n_base + n_tri, n_base > 0)"));
  }
  mdef.n_emit = static_cast<int32_t>(*n_state_map / n_phones - 1);
  return absl::OkStatus();
}

absl::StatusOr<int32_t> MdefIndex(const std::string& path, int32_t line, absl::string_view word,
                                  absl::string_view what) {
  int32_t v = 0;
  if (!absl::SimpleAtoi(word, &v) || v < 0) {
    return LineError(path, line, absl::StrCat("bad ", what, " \"", word, "\""));
  }
  return v;
}

// "base lft rt p attrib tmat senone... N".
absl::StatusOr<MdefPhone> ParseMdefRow(const std::string& path, int32_t line,
                                       const std::vector<absl::string_view>& w, int32_t n_emit) {
  const size_t n_words = 7 + size_t(n_emit);
  if (w.size() != n_words || w.back() != "N") {
    return LineError(path, line,
                     absl::StrCat("expected ", n_words, " fields: base lft rt p attrib tmat, ",
                                  n_emit, " senone ids and N"));
  }
  MdefPhone p;
  p.base = std::string(w[0]);
  p.left = std::string(w[1]);
  p.right = std::string(w[2]);
  p.position = std::string(w[3]);
  p.line = line;
  p.filler = w[4] == "filler";
  if (!p.filler && w[4] != "n/a") {
    return LineError(path, line, absl::StrCat("attrib \"", w[4], "\" is not filler or n/a"));
  }
  GMM_ASSIGN_OR_RETURN(p.tmat, MdefIndex(path, line, w[5], "transition matrix id"));
  for (int32_t k = 0; k < n_emit; ++k) {
    GMM_ASSIGN_OR_RETURN(int32_t s, MdefIndex(path, line, w[6 + k], "senone id"));
    p.senones.push_back(s);
  }
  return p;
}

// Base phones are unique and have "-" for lft, rt and p; triphones are made of base phones, have
// a word position b, e, i or s, and their base phone's attrib. `base_filler`: the base phones
// so far and whether each is a filler.
absl::Status CheckContext(const std::string& path, const MdefPhone& p, bool base_row,
                          const std::map<std::string, bool>& base_filler) {
  if (base_row) {
    if (!p.is_base() || p.right != "-" || p.position != "-") {
      return LineError(path, p.line, "a base phone needs \"-\" for lft, rt and p");
    }
    if (base_filler.contains(p.base)) {
      return LineError(path, p.line, absl::StrCat("base phone ", p.base, " appears twice"));
    }
    return absl::OkStatus();
  }
  for (const std::string* name : {&p.base, &p.left, &p.right}) {
    if (!base_filler.contains(*name)) {
      return LineError(path, p.line, absl::StrCat("unknown base phone ", *name));
    }
  }
  if (p.position.size() != 1 ||
      absl::string_view("besi").find(p.position[0]) == absl::string_view::npos) {
    return LineError(path, p.line, absl::StrCat("bad word position \"", p.position, "\""));
  }
  if (base_filler.at(p.base) != p.filler) {
    return LineError(path, p.line, absl::StrCat("attrib differs from base phone ", p.base, "'s"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Mdef> ParseMdef(const std::string& path, const std::string& text) {
  if (absl::StartsWith(text, "BMDF") || absl::StartsWith(text, "FDMB")) {
    return Unsupported(path, "binary model definition (pocketsphinx_mdef_convert -text converts)");
  }
  TextLines lines(text);
  std::vector<absl::string_view> words;
  if (!lines.Next(&words) || words.size() != 1 || words[0] != "0.3") {
    return LineError(path, lines.line(), "expected the format version 0.3");
  }
  Mdef mdef;
  int32_t n_tri = 0, n_state_map = 0;
  GMM_RETURN_IF_ERROR(ParseMdefHeader(path, lines, mdef, &n_tri, &n_state_map));
  std::map<std::string, bool> base_filler;
  const int32_t n_phones = mdef.n_base + n_tri;
  for (int32_t i = 0; i < n_phones; ++i) {
    if (!lines.Next(&words)) {
      return LineError(path, lines.line(),
                       absl::StrCat("the file ends after ", i, " of ", n_phones, " phones"));
    }
    GMM_ASSIGN_OR_RETURN(MdefPhone phone, ParseMdefRow(path, lines.line(), words, mdef.n_emit));
    GMM_RETURN_IF_ERROR(CheckContext(path, phone, i < mdef.n_base, base_filler));
    if (i < mdef.n_base) base_filler[phone.base] = phone.filler;
    mdef.phones.push_back(std::move(phone));
  }
  if (lines.Next(&words)) {
    return LineError(path, lines.line(),
                     absl::StrCat("unexpected text after the ", n_phones, " phones"));
  }
  return mdef;
}

// Every senone and matrix the mdef names must exist in its header and in the parameter files.
absl::Status CheckMdefRanges(const std::string& path, const Mdef& mdef, int32_t n_senone,
                             const std::string& tmats_path, const Tmats& tmats) {
  if (mdef.n_emit != tmats.n_emit) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", mdef.n_emit,
                                                   " emitting states per phone, but ", tmats_path,
                                                   " has matrices for ", tmats.n_emit));
  }
  for (const MdefPhone& p : mdef.phones) {
    if (p.tmat >= mdef.n_tied_tmat || p.tmat >= tmats.n_tmat) {
      return LineError(path, p.line,
                       absl::StrCat("transition matrix ", p.tmat, " is out of range (n_tied_tmat ",
                                    mdef.n_tied_tmat, ", ", tmats.n_tmat, " in ", tmats_path, ")"));
    }
    for (int32_t s : p.senones) {
      if (s >= mdef.n_tied_state || s >= n_senone) {
        return LineError(
            path, p.line,
            absl::StrCat("senone ", s, " is not a state of the model (n_tied_state ",
                         mdef.n_tied_state, ", ", n_senone, " senones in mixture_weights)"));
      }
    }
  }
  return absl::OkStatus();
}

std::string PhoneLabel(const MdefPhone& p) {
  if (p.is_base()) return p.base;
  return absl::StrCat(p.base, "(", p.left, ",", p.right, ",", p.position, ")");
}

// "AA_0" for the first state of base phone AA, "AA(B,C,i)_state0" for a triphone's.
std::string StateName(const MdefPhone& p, int32_t k) {
  return absl::StrCat(PhoneLabel(p), p.is_base() ? "_" : "_state", k);
}

// Each senone is named after the first phone state, in mdef order, that uses it.
std::vector<std::string> StateNames(const Mdef& mdef, int32_t n_senone) {
  std::vector<std::string> names(n_senone);
  for (const MdefPhone& p : mdef.phones) {
    for (int32_t k = 0; k < mdef.n_emit; ++k) {
      if (names[p.senones[k]].empty()) names[p.senones[k]] = StateName(p, k);
    }
  }
  for (int32_t s = 0; s < n_senone; ++s) {
    if (names[s].empty()) names[s] = absl::StrCat("senone", s);
  }
  return names;
}

// The phone (label only) that StateName() made `name` for, as state k; nullopt for other names.
std::optional<MdefPhone> PhoneOfStateName(absl::string_view name, int32_t k) {
  if (name.empty() || name.find_first_of(" \t\r\n") != absl::string_view::npos) return std::nullopt;
  MdefPhone p;
  if (absl::ConsumeSuffix(&name, absl::StrCat("_state", k))) {
    const size_t open = name.find('(');
    if (open == 0 || open == absl::string_view::npos || !absl::ConsumeSuffix(&name, ")")) {
      return std::nullopt;
    }
    const std::vector<std::string> context = absl::StrSplit(name.substr(open + 1), ',');
    if (context.size() != 3) return std::nullopt;
    p.base = std::string(name.substr(0, open));
    p.left = context[0];
    p.right = context[1];
    p.position = context[2];
    return p;
  }
  if (!absl::ConsumeSuffix(&name, absl::StrCat("_", k)) || name.empty()) return std::nullopt;
  p.base = std::string(name);
  return p;
}

// Reads means, variances and mixture weights into the Gaussians of a spec, one state per senone.
absl::StatusOr<GmmModelSpec> ReadGaussians(const std::string& dir) {
  const std::string means_path = FilePathIn(dir, "means");
  const std::string variances_path = FilePathIn(dir, "variances");
  const std::string weights_path = FilePathIn(dir, "mixture_weights");
  GMM_ASSIGN_OR_RETURN(Gauden means, ReadGauden(means_path));
  GMM_RETURN_IF_ERROR(CheckGauden(means_path, means, false));
  GMM_ASSIGN_OR_RETURN(Gauden variances, ReadGauden(variances_path));
  if (variances.n_mgau != means.n_mgau || variances.n_density != means.n_density ||
      variances.veclen != means.veclen) {
    return absl::InvalidArgumentError(
        absl::StrCat(variances_path, ": ", variances.n_mgau, "x", variances.n_density, "x",
                     variances.veclen, " values differ from the ", means.n_mgau, "x",
                     means.n_density, "x", means.veclen, " of ", means_path));
  }
  GMM_RETURN_IF_ERROR(CheckGauden(variances_path, variances, true));
  GMM_ASSIGN_OR_RETURN(MixtureWeights weights, ReadMixtureWeights(weights_path));
  GMM_RETURN_IF_ERROR(CheckContinuous(means_path, means, weights_path, weights));
  GmmModelSpec spec;
  spec.dim = means.veclen;
  for (int32_t s = 0; s <= weights.n_senone; ++s) {
    spec.gauss_begin.push_back(static_cast<uint32_t>(s * weights.n_density));
  }
  spec.weights = std::move(weights.data);
  spec.means = std::move(means.data);
  spec.variances = std::move(variances.data);
  return spec;
}

// One topology entry per transition matrix (states 0..S-1 emitting with pdf class k, S final,
// arcs for the nonzero probabilities), one phone per mdef row, one transition-state per emitting
// state of each phone, and the log of each arc's probability in transition-id order.
absl::StatusOr<TransitionModel> BuildHmm(const Mdef& mdef, const Tmats& tmats) {
  HmmTopology topo;
  const int32_t n_emit = tmats.n_emit;
  for (int32_t t = 0; t < tmats.n_tmat; ++t) {
    std::vector<HmmState> entry(n_emit + 1);
    for (int32_t i = 0; i < n_emit; ++i) {
      entry[i].forward_pdf_class = entry[i].self_loop_pdf_class = i;
      for (int32_t j = 0; j <= n_emit; ++j) {
        if (const float p = tmats.prob(t, i, j); p > 0.0f) entry[i].transitions.emplace_back(j, p);
      }
    }
    topo.entries.push_back(std::move(entry));
  }
  topo.phone_to_entry.push_back(-1);
  std::vector<TransitionTuple> tuples;
  std::vector<float> log_probs = {0.0f};
  for (size_t i = 0; i < mdef.phones.size(); ++i) {
    const MdefPhone& phone = mdef.phones[i];
    const int32_t id = static_cast<int32_t>(i) + 1;
    topo.phones.push_back(id);
    topo.phone_to_entry.push_back(phone.tmat);
    for (int32_t k = 0; k < n_emit; ++k) {
      tuples.push_back({id, k, phone.senones[k], phone.senones[k]});
      for (const auto& [dst, prob] : topo.entries[phone.tmat][k].transitions) {
        log_probs.push_back(static_cast<float>(std::log(static_cast<double>(prob))));
      }
    }
  }
  return TransitionModel::Create(std::move(topo), std::move(tuples), std::move(log_probs));
}

// Reads transition_matrices and mdef into the HMM and the state names of `spec`.
absl::Status ReadHmm(const std::string& dir, GmmModelSpec& spec) {
  const std::string tmats_path = FilePathIn(dir, "transition_matrices");
  const std::string mdef_path = FilePathIn(dir, "mdef");
  const int32_t n_senone = static_cast<int32_t>(spec.gauss_begin.size()) - 1;
  GMM_ASSIGN_OR_RETURN(Tmats tmats, ReadTmats(tmats_path));
  GMM_ASSIGN_OR_RETURN(std::string mdef_text, ReadWholeFile(mdef_path));
  GMM_ASSIGN_OR_RETURN(Mdef mdef, ParseMdef(mdef_path, mdef_text));
  GMM_RETURN_IF_ERROR(CheckMdefRanges(mdef_path, mdef, n_senone, tmats_path, tmats));
  auto hmm = BuildHmm(mdef, tmats);
  if (!hmm.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(mdef_path, ": ", hmm.status().message()));
  }
  spec.hmm = *std::move(hmm);
  spec.state_names = StateNames(mdef, n_senone);
  return absl::OkStatus();
}

// Codebook s is state s, padded to the largest number of Gaussians with weight-0 copies of the
// state's first Gaussian.
struct PaddedGaussians {
  int32_t n_density = 0;
  std::vector<float> means, variances, weights;
};

PaddedGaussians PadGaussians(const GmmModel& model) {
  PaddedGaussians out;
  out.n_density = model.max_gauss_per_state();
  for (int32_t s = 0; s < model.num_states(); ++s) {
    for (int32_t i = 0; i < out.n_density; ++i) {
      const bool real = i < model.num_gauss_in(s);
      const int64_t g = model.gauss_begin(s) + (real ? i : 0);
      out.means.insert(out.means.end(), model.mean(g).begin(), model.mean(g).end());
      out.variances.insert(out.variances.end(), model.variance(g).begin(), model.variance(g).end());
      out.weights.push_back(real ? model.weight(g) : 0.0f);
    }
  }
  return out;
}

// The mdef phones and transition matrices a model is written with.
struct SphinxHmm {
  Mdef mdef;
  Tmats tmats;
};

// Topology entries as transition matrices; nullopt unless every entry has S emitting states
// followed by the final one.
std::optional<Tmats> TmatsOfTopology(const HmmTopology& topo) {
  Tmats t;
  t.n_tmat = static_cast<int32_t>(topo.entries.size());
  t.n_emit = static_cast<int32_t>(topo.entries[0].size()) - 1;
  if (t.n_emit < 1) return std::nullopt;
  t.probs.assign(size_t(t.n_tmat) * t.n_emit * (t.n_emit + 1), 0.0f);
  for (int32_t e = 0; e < t.n_tmat; ++e) {
    const auto& entry = topo.entries[e];
    if (static_cast<int32_t>(entry.size()) != t.n_emit + 1) return std::nullopt;
    for (int32_t i = 0; i < t.n_emit; ++i) {
      if (entry[i].forward_pdf_class != i || entry[i].self_loop_pdf_class != i) return std::nullopt;
      for (const auto& [dst, prob] : entry[i].transitions) {
        t.probs[(size_t(e) * t.n_emit + i) * (t.n_emit + 1) + dst] = prob;
      }
    }
  }
  return t;
}

// Phone p's senones and matrix, from tuples in the order BuildHmm() makes them.
std::optional<std::vector<MdefPhone>> PhoneStates(const TransitionModel& tm, int32_t n_emit,
                                                  size_t n_states) {
  const std::vector<TransitionTuple>& tuples = tm.tuples();
  std::vector<MdefPhone> phones(tm.NumPhones());
  if (tuples.size() != phones.size() * n_emit) return std::nullopt;
  for (size_t i = 0; i < tuples.size(); ++i) {
    const TransitionTuple& t = tuples[i];
    MdefPhone& p = phones[i / n_emit];
    if (t.phone != static_cast<int32_t>(i / n_emit) + 1 ||
        t.hmm_state != static_cast<int32_t>(i % n_emit) || t.forward_pdf != t.self_loop_pdf ||
        size_t(t.forward_pdf) >= n_states) {
      return std::nullopt;
    }
    p.tmat = tm.topology().phone_to_entry[t.phone];
    p.senones.push_back(t.forward_pdf);
  }
  return phones;
}

// Gives each phone the label of the states StateNames() named after it, and the attrib filler
// to SIL and +NOISE+-style phones. False when a phone is left without a label, or the labels do
// not make a valid mdef.
bool LabelPhones(const std::vector<std::string>& state_names, std::vector<MdefPhone>& phones) {
  std::vector<bool> seen(state_names.size(), false);
  for (MdefPhone& p : phones) {
    for (size_t k = 0; k < p.senones.size(); ++k) {
      if (seen[p.senones[k]]) continue;
      seen[p.senones[k]] = true;
      std::optional<MdefPhone> label =
          PhoneOfStateName(state_names[p.senones[k]], static_cast<int32_t>(k));
      if (!label || (!p.base.empty() && PhoneLabel(*label) != PhoneLabel(p))) return false;
      p.base = label->base;
      p.left = label->left;
      p.right = label->right;
      p.position = label->position;
    }
  }
  std::map<std::string, bool> base_filler;
  bool triphones_started = false;
  for (MdefPhone& p : phones) {
    if (p.base.empty() || (p.is_base() && triphones_started)) return false;
    triphones_started = !p.is_base();
    p.filler =
        p.base == "SIL" || (p.base.size() > 2 && p.base.front() == '+' && p.base.back() == '+');
    if (!CheckContext("", p, p.is_base(), base_filler).ok()) return false;
    if (p.is_base()) base_filler[p.base] = p.filler;
  }
  return true;
}

// The phones and matrices of a model read from Sphinx; nullopt for any other model.
std::optional<SphinxHmm> HmmOfSphinxModel(const GmmModel& model) {
  if (model.source_format() != "sphinx" || model.hmm().empty() || model.state_names().empty()) {
    return std::nullopt;
  }
  std::optional<Tmats> tmats = TmatsOfTopology(model.hmm().topology());
  if (!tmats) return std::nullopt;
  std::optional<std::vector<MdefPhone>> phones =
      PhoneStates(model.hmm(), tmats->n_emit, model.state_names().size());
  if (!phones || !LabelPhones(model.state_names(), *phones)) return std::nullopt;
  SphinxHmm out{Mdef{}, *std::move(tmats)};
  out.mdef.n_base = static_cast<int32_t>(std::count_if(
      phones->begin(), phones->end(), [](const MdefPhone& p) { return p.is_base(); }));
  out.mdef.n_tied_state = model.num_states();
  out.mdef.n_tied_ci_state = out.mdef.n_base * out.tmats.n_emit;
  out.mdef.n_tied_tmat = out.tmats.n_tmat;
  out.mdef.n_emit = out.tmats.n_emit;
  out.mdef.phones = *std::move(phones);
  return out;
}

// One base phone "STATEs" per state s, all with one emitting state and the same matrix.
SphinxHmm OneStatePerPhone(int32_t num_states) {
  SphinxHmm out{Mdef{num_states, num_states, num_states, 1, 1, {}}, Tmats{1, 1, {0.5f, 0.5f}}};
  for (int32_t s = 0; s < num_states; ++s) {
    MdefPhone p;
    p.base = absl::StrCat("STATE", s);
    p.senones = {s};
    out.mdef.phones.push_back(std::move(p));
  }
  return out;
}

std::string FormatMdef(const Mdef& m) {
  const int32_t n_phones = static_cast<int32_t>(m.phones.size());
  std::string out =
      absl::StrCat("# Written by gmmscore\n0.3\n", m.n_base, " n_base\n", n_phones - m.n_base,
                   " n_tri\n", n_phones * (m.n_emit + 1), " n_state_map\n", m.n_tied_state,
                   " n_tied_state\n", m.n_tied_ci_state, " n_tied_ci_state\n", m.n_tied_tmat,
                   " n_tied_tmat\n", "#\n# base lft rt p attrib tmat ... state ids ... N\n");
  for (const MdefPhone& p : m.phones) {
    absl::StrAppend(&out, p.base, " ", p.left, " ", p.right, " ", p.position, " ",
                    p.filler ? "filler" : "n/a", " ", p.tmat, " ", absl::StrJoin(p.senones, " "),
                    " N\n");
  }
  return out;
}

}  // namespace

absl::StatusOr<GmmModel> ReadSphinxModel(const std::string& dir) {
  GMM_ASSIGN_OR_RETURN(GmmModelSpec spec, ReadGaussians(dir));
  GMM_RETURN_IF_ERROR(ReadHmm(dir, spec));
  spec.source_format = "sphinx";
  auto model = GmmModel::Create(std::move(spec));
  if (!model.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": ", model.status().message()));
  }
  return model;
}

absl::Status WriteSphinxModel(const GmmModel& model, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat(dir, ": cannot create: ", ec.message()));
  const PaddedGaussians gauss = PadGaussians(model);
  const int32_t n = model.num_states();
  std::optional<SphinxHmm> sphinx_hmm = HmmOfSphinxModel(model);
  const SphinxHmm hmm = sphinx_hmm ? *std::move(sphinx_hmm) : OneStatePerPhone(n);
  const Tmats& t = hmm.tmats;
  GMM_RETURN_IF_ERROR(WriteWholeFile(FilePathIn(dir, "means"),
                                     S3Bytes({n, 1, gauss.n_density, model.dim()}, gauss.means)));
  GMM_RETURN_IF_ERROR(
      WriteWholeFile(FilePathIn(dir, "variances"),
                     S3Bytes({n, 1, gauss.n_density, model.dim()}, gauss.variances)));
  GMM_RETURN_IF_ERROR(WriteWholeFile(FilePathIn(dir, "mixture_weights"),
                                     S3Bytes({n, 1, gauss.n_density}, gauss.weights)));
  GMM_RETURN_IF_ERROR(WriteWholeFile(FilePathIn(dir, "transition_matrices"),
                                     S3Bytes({t.n_tmat, t.n_emit, t.n_emit + 1}, t.probs)));
  return WriteWholeFile(FilePathIn(dir, "mdef"), FormatMdef(hmm.mdef));
}

}  // namespace gmmscore
