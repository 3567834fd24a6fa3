#include "formats/kaldi_model_copy.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_model.h"
#include "formats/kaldi_stream.h"
#include "formats/read_limits.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// One <DiagGMM> object (Kaldi's DiagGmm::Read; the stored gconsts are read and recomputed).
// `where` ("pdf 3: ") prefixes errors.
absl::StatusOr<KaldiStoredGmm> ReadStoredGmm(KaldiReader& in, const std::string& where) {
  GMM_ASSIGN_OR_RETURN(std::string token, in.Token());
  if (token != "<DiagGMM>" && token != "<DiagGMMBegin>") {
    return in.Error(absl::StrCat(where, "expected <DiagGMM>, found ", token.substr(0, 40)));
  }
  KaldiStoredGmm gmm;
  GMM_ASSIGN_OR_RETURN(token, in.Token());
  if (token == "<GCONSTS>") {
    GMM_ASSIGN_OR_RETURN(gmm.gconsts, in.FloatVector());
    GMM_RETURN_IF_ERROR(in.Expect("<WEIGHTS>"));
  } else if (token != "<WEIGHTS>") {
    return in.Error(absl::StrCat(where, "expected <GCONSTS> or <WEIGHTS>, found ", token));
  }
  GMM_ASSIGN_OR_RETURN(gmm.weights, in.FloatVector());
  GMM_RETURN_IF_ERROR(in.Expect("<MEANS_INVVARS>"));
  GMM_ASSIGN_OR_RETURN(gmm.means_invvars, in.FloatMatrix());
  GMM_RETURN_IF_ERROR(in.Expect("<INV_VARS>"));
  GMM_ASSIGN_OR_RETURN(gmm.inv_vars, in.FloatMatrix());
  GMM_ASSIGN_OR_RETURN(token, in.Token());
  if (token != "</DiagGMM>" && token != "<DiagGMMEnd>") {
    return in.Error(absl::StrCat(where, "expected </DiagGMM>, found ", token.substr(0, 40)));
  }
  const size_t num_gauss = gmm.weights.size();
  if (size_t(gmm.means_invvars.rows) != num_gauss || size_t(gmm.inv_vars.rows) != num_gauss ||
      gmm.means_invvars.cols != gmm.inv_vars.cols) {
    return in.Error(absl::StrCat(where, num_gauss, " weights but means ", gmm.means_invvars.rows,
                                 "x", gmm.means_invvars.cols, " and inverse variances ",
                                 gmm.inv_vars.rows, "x", gmm.inv_vars.cols));
  }
  auto gconsts = KaldiGconsts(gmm.weights, gmm.means_invvars, gmm.inv_vars);
  if (!gconsts.ok()) return in.Error(absl::StrCat(where, gconsts.status().message()));
  gmm.gconsts = *std::move(gconsts);
  return gmm;
}

absl::Status ReadStoredGmms(KaldiReader& in, KaldiStoredModel* model) {
  GMM_RETURN_IF_ERROR(in.Expect("<DIMENSION>"));
  GMM_ASSIGN_OR_RETURN(model->dim, in.Int32());
  GMM_RETURN_IF_ERROR(in.Expect("<NUMPDFS>"));
  GMM_ASSIGN_OR_RETURN(const int32_t num_pdfs, in.Int32());
  if (num_pdfs < 1) return in.Error(absl::StrCat("bad number of pdfs ", num_pdfs));
  // Not reserved: each pdf is read from bytes the file must have.
  for (int32_t pdf = 0; pdf < num_pdfs; ++pdf) {
    const std::string where = absl::StrCat("pdf ", pdf, ": ");
    GMM_ASSIGN_OR_RETURN(KaldiStoredGmm gmm, ReadStoredGmm(in, where));
    if (gmm.means_invvars.cols != model->dim) {
      return in.Error(absl::StrCat(where, "dimension ", gmm.means_invvars.cols, ", the model's is ",
                                   model->dim));
    }
    model->pdfs.push_back(std::move(gmm));
  }
  model->has_gmms = true;
  return absl::OkStatus();
}

void WriteStoredGmm(const KaldiStoredGmm& gmm, KaldiWriter& out) {
  out.Token("<DiagGMM>");
  out.Newline();
  out.Token("<GCONSTS>");
  out.FloatVector(gmm.gconsts.data(), gmm.gconsts.size());
  out.Token("<WEIGHTS>");
  out.FloatVector(gmm.weights.data(), gmm.weights.size());
  out.Token("<MEANS_INVVARS>");
  out.FloatMatrix(gmm.means_invvars);
  out.Token("<INV_VARS>");
  out.FloatMatrix(gmm.inv_vars);
  out.Token("</DiagGMM>");
  out.Newline();
}

}  // namespace

absl::StatusOr<std::vector<float>> KaldiGconsts(const std::vector<float>& weights,
                                                const Matrix& means_invvars,
                                                const Matrix& inv_vars) {
  constexpr double kLog2Pi = 1.8378770664093454835606594728112;
  const int32_t dim = means_invvars.cols;
  // As Kaldi: the constant in float, each dimension's term in double added to a float sum.
  const float offset = static_cast<float>(-0.5 * kLog2Pi * dim);
  std::vector<float> gconsts(weights.size());
  for (size_t g = 0; g < weights.size(); ++g) {
    if (weights[g] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Gaussian ", g, ": negative weight ", weights[g]));
    }
    float gc = std::log(weights[g]) + offset;
    for (int32_t d = 0; d < dim; ++d) {
      const float iv = inv_vars.at(int32_t(g), d);
      const double mi = means_invvars.at(int32_t(g), d);
      gc = static_cast<float>(gc + (0.5 * static_cast<double>(std::log(iv)) - 0.5 * mi * mi / iv));
    }
    if (std::isnan(gc)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Gaussian ", g, ": not a number in the gconst computation"));
    }
    gconsts[g] = std::isinf(gc) ? -std::abs(gc) : gc;
  }
  return gconsts;
}

absl::StatusOr<KaldiStoredModel> ReadKaldiStoredModel(const std::string& rxfilename,
                                                      bool transitions, bool gmms) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  std::istream& is = input->stream();
  KaldiReader in(is, input->name(), KaldiReader::ConsumeBinaryMarker(is));
  KaldiStoredModel model;
  if (transitions) {
    GMM_ASSIGN_OR_RETURN(model.hmm, ReadKaldiTransitionModel(in));
  }
  if (gmms) {
    GMM_RETURN_IF_ERROR(CatchAllocation(in.name(), [&] { return ReadStoredGmms(in, &model); }));
  }
  GMM_RETURN_IF_ERROR(input->Close());
  return model;
}

absl::Status WriteKaldiStoredModel(const KaldiStoredModel& model, const std::string& wxfilename,
                                   bool binary) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> output, OutputStream::Open(wxfilename));
  KaldiWriter out(output->stream(), binary, TextReals::kKaldi);
  out.BinaryMarker();
  if (model.hmm.has_value()) WriteKaldiTransitionModel(*model.hmm, out);
  if (model.has_gmms) {
    out.Token("<DIMENSION>");
    out.Int32(model.dim);
    out.Token("<NUMPDFS>");
    out.Int32(static_cast<int32_t>(model.pdfs.size()));
    for (const KaldiStoredGmm& gmm : model.pdfs) WriteStoredGmm(gmm, out);
  }
  if (!output->stream()) {
    return absl::DataLossError(absl::StrCat(output->name(), ": write failed"));
  }
  return output->Close();
}

absl::StatusOr<GmmModel> StoredToGmmModel(const KaldiStoredModel& stored, const std::string& name) {
  if (!stored.hmm.has_value() || !stored.has_gmms) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": not a whole model"));
  }
  if (size_t(stored.hmm->NumPdfs()) != stored.pdfs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the transition model has ",
                                                   stored.hmm->NumPdfs(), " pdfs, the GMMs ",
                                                   stored.pdfs.size()));
  }
  GmmModelSpec spec;
  spec.dim = stored.dim;
  spec.gauss_begin.push_back(0);
  for (size_t pdf = 0; pdf < stored.pdfs.size(); ++pdf) {
    const KaldiStoredGmm& gmm = stored.pdfs[pdf];
    for (size_t i = 0; i < gmm.inv_vars.data.size(); ++i) {
      const double inv_var = gmm.inv_vars.data[i];
      if (!(inv_var > 0.0) || !std::isfinite(inv_var)) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": pdf ", pdf, ", Gaussian ", i / size_t(stored.dim),
                         ": inverse variance ", inv_var, " is not a finite number > 0"));
      }
      spec.means.push_back(static_cast<float>(gmm.means_invvars.data[i] / inv_var));
      spec.variances.push_back(static_cast<float>(1.0 / inv_var));
    }
    spec.weights.insert(spec.weights.end(), gmm.weights.begin(), gmm.weights.end());
    spec.gauss_begin.push_back(static_cast<uint32_t>(spec.weights.size()));
  }
  spec.hmm = *stored.hmm;
  spec.source_format = "kaldi";
  auto model = GmmModel::Create(std::move(spec));
  if (!model.ok()) {
    return absl::Status(model.status().code(), absl::StrCat(name, ": ", model.status().message()));
  }
  return model;
}

absl::Status StoreChangedPdfs(const GmmModel& before, const GmmModel& after,
                              KaldiStoredModel* stored) {
  const int32_t dim = after.dim();
  for (int32_t pdf = 0; pdf < after.num_states(); ++pdf) {
    const int32_t n = after.num_gauss_in(pdf);
    const uint32_t a0 = after.gauss_begin(pdf), b0 = before.gauss_begin(pdf);
    bool same = n == before.num_gauss_in(pdf);
    for (int32_t g = 0; same && g < n; ++g) {
      same = after.weight(a0 + g) == before.weight(b0 + g) &&
             std::ranges::equal(after.mean(a0 + g), before.mean(b0 + g)) &&
             std::ranges::equal(after.variance(a0 + g), before.variance(b0 + g));
    }
    if (same) continue;
    KaldiStoredGmm gmm;
    gmm.means_invvars = Matrix(n, dim);
    gmm.inv_vars = Matrix(n, dim);
    for (int32_t g = 0; g < n; ++g) {
      gmm.weights.push_back(after.weight(a0 + g));
      for (int32_t d = 0; d < dim; ++d) {
        const double inv_var = 1.0 / after.variance(a0 + g)[d];
        gmm.inv_vars.at(g, d) = static_cast<float>(inv_var);
        gmm.means_invvars.at(g, d) = static_cast<float>(after.mean(a0 + g)[d] * inv_var);
      }
    }
    auto gconsts = KaldiGconsts(gmm.weights, gmm.means_invvars, gmm.inv_vars);
    if (!gconsts.ok()) {
      return absl::Status(gconsts.status().code(),
                          absl::StrCat("pdf ", pdf, ": ", gconsts.status().message()));
    }
    gmm.gconsts = *std::move(gconsts);
    stored->pdfs[size_t(pdf)] = std::move(gmm);
  }
  return absl::OkStatus();
}

}  // namespace gmmscore
