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

}  // namespace gmmscore
