#include "formats/kaldi_accs.h"

#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "formats/kaldi_stream.h"
#include "formats/read_limits.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// The bytes one <GMMACCS> block takes at least (its tokens and sizes), for sizing by <NUMPDFS>.
constexpr uint64_t kMinGmmAccsBytes = 60;
// Kaldi's feature dimensions are tens to a few thousand.
constexpr int32_t kMaxStatsDim = 1 << 16;

absl::Status CheckFinite(KaldiReader& in, const std::vector<double>& values, const char* what) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return in.Error(absl::StrCat(what, " value ", i, " is ", values[i]));
    }
  }
  return absl::OkStatus();
}

// A <MEANACCS> or <DIAGVARACCS> matrix: G x dim where the flags keep it, else empty (0 x 0).
absl::Status ReadStatsMatrix(KaldiReader& in, int32_t num_gauss, int32_t dim, bool kept,
                             const char* what, std::vector<double>* out) {
  int32_t rows = 0, cols = 0;
  GMM_ASSIGN_OR_RETURN(std::vector<double> values, in.DoubleMatrix(&rows, &cols));
  if (rows == 0 && !kept) return absl::OkStatus();
  if (!kept || rows != num_gauss || cols != dim) {
    return in.Error(absl::StrCat(what, " is ", rows, " x ", cols, ", expected ",
                                 kept ? num_gauss : 0, " x ", kept ? dim : 0));
  }
  GMM_RETURN_IF_ERROR(CheckFinite(in, values, what));
  *out = std::move(values);
  return absl::OkStatus();
}

// One <GMMACCS> block, appended to stats (whose dim and flags the first block sets).
absl::Status ReadGmmAccs(KaldiReader& in, int32_t pdf, GmmStats* stats) {
  auto where = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(s.message(), " (statistics of pdf ", pdf, ")"));
  };
  auto read = [&]() -> absl::Status {
    GMM_RETURN_IF_ERROR(in.Expect("<GMMACCS>"));
    GMM_RETURN_IF_ERROR(in.Expect("<VECSIZE>"));
    GMM_ASSIGN_OR_RETURN(const int32_t dim, in.Int32());
    GMM_RETURN_IF_ERROR(in.Expect("<NUMCOMPONENTS>"));
    GMM_ASSIGN_OR_RETURN(const int32_t num_gauss, in.Int32());
    GMM_RETURN_IF_ERROR(in.Expect("<FLAGS>"));
    GMM_ASSIGN_OR_RETURN(const uint16_t file_flags, in.Uint16());
    if (dim < 1 || dim > kMaxStatsDim) return in.Error(absl::StrCat("bad dimension ", dim));
    if (num_gauss < 1) return in.Error(absl::StrCat("bad number of Gaussians ", num_gauss));
    if ((file_flags & ~kGmmAll) != 0) return in.Error(absl::StrCat("bad flags ", file_flags));
    const uint16_t flags = AugmentGmmFlags(file_flags);
    if (pdf == 0) {
      stats->dim = dim;
      stats->flags = flags;
    } else if (dim != stats->dim || flags != stats->flags) {
      return in.Error(absl::StrCat("dimension ", dim, " and flags ", GmmFlagsToString(flags),
                                   " differ from pdf 0's ", stats->dim, " and ",
                                   GmmFlagsToString(stats->flags)));
    }
    // Each Gaussian's occupancy takes 4 bytes at least (text: 2), so that G is bounded by the file.
    GMM_RETURN_IF_ERROR(
        in.CheckRoom(uint64_t(num_gauss), 2, kMaxKaldiObjectValues, "Gaussians' statistics"));
    std::vector<double> occupancy(size_t(num_gauss), 0.0), first, second;
    while (true) {
      GMM_ASSIGN_OR_RETURN(const std::string token, in.Token());
      if (token == "</GMMACCS>") break;
      if (token == "<OCCUPANCY>") {
        GMM_ASSIGN_OR_RETURN(occupancy, in.DoubleVector());
        if (occupancy.size() != size_t(num_gauss)) {
          return in.Error(
              absl::StrCat("occupancy has ", occupancy.size(), " values, expected ", num_gauss));
        }
        GMM_RETURN_IF_ERROR(CheckFinite(in, occupancy, "occupancy"));
      } else if (token == "<MEANACCS>") {
        GMM_RETURN_IF_ERROR(ReadStatsMatrix(in, num_gauss, dim, (flags & kGmmMeans) != 0,
                                            "the mean statistics", &first));
      } else if (token == "<DIAGVARACCS>") {
        GMM_RETURN_IF_ERROR(ReadStatsMatrix(in, num_gauss, dim, (flags & kGmmVariances) != 0,
                                            "the variance statistics", &second));
      } else {
        return in.Error(absl::StrCat("unexpected token ", token.substr(0, 40)));
      }
    }
    const size_t values = size_t(num_gauss) * size_t(dim);
    if ((flags & kGmmMeans) && first.empty()) first.assign(values, 0.0);
    if ((flags & kGmmVariances) && second.empty()) second.assign(values, 0.0);
    stats->occupancy.insert(stats->occupancy.end(), occupancy.begin(), occupancy.end());
    stats->first.insert(stats->first.end(), first.begin(), first.end());
    stats->second.insert(stats->second.end(), second.begin(), second.end());
    stats->gauss_begin.push_back(stats->gauss_begin.back() + uint32_t(num_gauss));
    if (stats->occupancy.size() > kMaxKaldiObjectValues) {
      return in.Error("more Gaussians than any model holds");
    }
    return absl::OkStatus();
  };
  absl::Status s = read();
  return s.ok() ? s : where(s);
}

void WriteFloatMatrix(const std::vector<double>& values, int32_t begin, int32_t rows, int32_t dim,
                      KaldiWriter& out) {
  Matrix m;
  if (!values.empty()) {
    m.Resize(rows, dim);
    for (size_t i = 0; i < m.data.size(); ++i) {
      m.data[i] = static_cast<float>(values[size_t(begin) * size_t(dim) + i]);
    }
  }
  out.FloatMatrix(m);
}

}  // namespace

absl::StatusOr<GmmStats> ReadKaldiDiagGmmStats(KaldiReader& in) {
  return CatchAllocation(in.name(), [&]() -> absl::StatusOr<GmmStats> {
    GmmStats stats;
    stats.gauss_begin = {0};
    GMM_RETURN_IF_ERROR(ReadGmmAccs(in, 0, &stats));
    return stats;
  });
}

absl::StatusOr<ModelStats> ReadKaldiModelStats(KaldiReader& in) {
  return CatchAllocation(in.name(), [&]() -> absl::StatusOr<ModelStats> {
    ModelStats stats;
    GMM_ASSIGN_OR_RETURN(stats.transitions, in.DoubleVector());
    if (stats.transitions.empty()) {
      return in.Error("the transition statistics are empty (index 0 is always there)");
    }
    {
      absl::Status finite = CheckFinite(in, stats.transitions, "transition statistic");
      if (!finite.ok()) return finite;
    }
    GMM_RETURN_IF_ERROR(in.Expect("<NUMPDFS>"));
    GMM_ASSIGN_OR_RETURN(const int32_t num_pdfs, in.Int32());
    if (num_pdfs < 1) return in.Error(absl::StrCat("bad number of pdfs ", num_pdfs));
    GMM_RETURN_IF_ERROR(in.CheckRoom(uint64_t(num_pdfs), kMinGmmAccsBytes, uint64_t(kMaxPdfId),
                                     "pdfs' statistics"));
    GmmStats& gmm = stats.gmm;
    gmm.gauss_begin.reserve(size_t(num_pdfs) + 1);
    gmm.gauss_begin.push_back(0);
    for (int32_t pdf = 0; pdf < num_pdfs; ++pdf) GMM_RETURN_IF_ERROR(ReadGmmAccs(in, pdf, &gmm));
    // The totals are missing from files of Kaldi versions before 2013.
    std::istream& is = in.stream();
    if (!in.binary()) is >> std::ws;
    if (is.peek() == std::char_traits<char>::eof()) {
      is.clear();
      return stats;
    }
    GMM_RETURN_IF_ERROR(in.Expect("<total_like>"));
    GMM_ASSIGN_OR_RETURN(gmm.total_log_like, in.Double());
    GMM_RETURN_IF_ERROR(in.Expect("<total_frames>"));
    GMM_ASSIGN_OR_RETURN(gmm.total_frames, in.Double());
    if (!std::isfinite(gmm.total_log_like) || !std::isfinite(gmm.total_frames)) {
      return in.Error("the total log-likelihood or frame count is not finite");
    }
    return stats;
  });
}

void WriteKaldiDiagGmmStats(const GmmStats& stats, int32_t pdf, KaldiWriter& out) {
  const int32_t begin = static_cast<int32_t>(stats.gauss_begin[pdf]);
  const int32_t num_gauss = stats.num_gauss_in(pdf);
  out.Token("<GMMACCS>");
  out.Token("<VECSIZE>");
  out.Int32(stats.dim);
  out.Token("<NUMCOMPONENTS>");
  out.Int32(num_gauss);
  out.Token("<FLAGS>");
  out.Uint16(stats.flags);
  std::vector<float> occupancy(static_cast<size_t>(num_gauss));
  for (int32_t g = 0; g < num_gauss; ++g) {
    occupancy[size_t(g)] = static_cast<float>(stats.occupancy[size_t(begin + g)]);
  }
  out.Token("<OCCUPANCY>");
  out.FloatVector(occupancy.data(), occupancy.size());
  out.Token("<MEANACCS>");
  WriteFloatMatrix(stats.first, begin, num_gauss, stats.dim, out);
  out.Token("<DIAGVARACCS>");
  WriteFloatMatrix(stats.second, begin, num_gauss, stats.dim, out);
  out.Token("</GMMACCS>");
}

void WriteKaldiModelStats(const ModelStats& stats, KaldiWriter& out) {
  out.DoubleVector(stats.transitions.data(), stats.transitions.size());
  out.Token("<NUMPDFS>");
  out.Int32(stats.gmm.num_pdfs());
  for (int32_t pdf = 0; pdf < stats.gmm.num_pdfs(); ++pdf)
    WriteKaldiDiagGmmStats(stats.gmm, pdf, out);
  out.Token("<total_like>");
  out.Double(stats.gmm.total_log_like);
  out.Token("<total_frames>");
  out.Double(stats.gmm.total_frames);
}

absl::StatusOr<ModelStats> ReadModelStatsFile(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  std::istream& is = input->stream();
  const bool binary = KaldiReader::ConsumeBinaryMarker(is);
  KaldiReader reader(is, input->name(), binary);
  GMM_ASSIGN_OR_RETURN(ModelStats stats, ReadKaldiModelStats(reader));
  GMM_RETURN_IF_ERROR(input->Close());
  return stats;
}

absl::Status WriteModelStatsFile(const ModelStats& stats, const std::string& wxfilename,
                                 bool binary) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> output, OutputStream::Open(wxfilename));
  KaldiWriter writer(output->stream(), binary);
  writer.BinaryMarker();
  WriteKaldiModelStats(stats, writer);
  return output->Close();
}

}  // namespace gmmscore
