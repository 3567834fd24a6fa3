#include "formats/kaldi_model.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "formats/kaldi_stream.h"
#include "formats/kaldi_topology.h"
#include "formats/read_limits.h"
#include "model/kaldi_stored_model.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// The fewest bytes an integer takes: 5 in binary (a size byte and 4), 2 in text (a digit and a
// space).
uint64_t MinIntBytes(const KaldiReader& in) { return in.binary() ? 5 : 2; }

// One <DiagGMM> object (Kaldi's DiagGmm::Read), its Gaussians appended to spec as a new pdf;
// spec->dim 0 takes the dimension from the object's matrices. `where` prefixes errors.
absl::Status ReadDiagGmm(KaldiReader& in, const std::string& where, GmmModelSpec* spec) {
  GMM_ASSIGN_OR_RETURN(std::string token, in.Token());
  if (token != "<DiagGMM>" && token != "<DiagGMMBegin>") {
    return in.Error(absl::StrCat(where, "expected <DiagGMM>, found ", token.substr(0, 40)));
  }
  GMM_ASSIGN_OR_RETURN(token, in.Token());
  if (token == "<GCONSTS>") {  // optional and ignored: recomputed from the parameters
    GMM_ASSIGN_OR_RETURN(std::vector<float> ignored, in.FloatVector());
    GMM_RETURN_IF_ERROR(in.Expect("<WEIGHTS>"));
  } else if (token != "<WEIGHTS>") {
    return in.Error(absl::StrCat(where, "expected <GCONSTS> or <WEIGHTS>, found ", token));
  }
  GMM_ASSIGN_OR_RETURN(std::vector<float> weights, in.FloatVector());
  GMM_RETURN_IF_ERROR(in.Expect("<MEANS_INVVARS>"));
  GMM_ASSIGN_OR_RETURN(Matrix means_invvars, in.FloatMatrix());
  GMM_RETURN_IF_ERROR(in.Expect("<INV_VARS>"));
  const int64_t inv_vars_offset = in.offset();
  GMM_ASSIGN_OR_RETURN(Matrix inv_vars, in.FloatMatrix());
  GMM_ASSIGN_OR_RETURN(token, in.Token());
  if (token != "</DiagGMM>" && token != "<DiagGMMEnd>") {
    return in.Error(absl::StrCat(where, "expected </DiagGMM>, found ", token.substr(0, 40)));
  }
  if (spec->dim == 0) spec->dim = means_invvars.cols;
  const size_t num_gauss = weights.size(), dim = size_t(spec->dim);
  if (num_gauss == 0) return in.Error(absl::StrCat(where, "no Gaussians"));
  if (dim == 0 || size_t(means_invvars.rows) != num_gauss || size_t(inv_vars.rows) != num_gauss ||
      size_t(means_invvars.cols) != dim || size_t(inv_vars.cols) != dim) {
    return in.Error(absl::StrCat(where, num_gauss, " weights but means ", means_invvars.rows, "x",
                                 means_invvars.cols, " and inverse variances ", inv_vars.rows, "x",
                                 inv_vars.cols, " (dimension ", dim, ")"));
  }
  for (size_t g = 0; g < num_gauss; ++g) {
    for (size_t d = 0; d < dim; ++d) {
      const double inv_var = inv_vars.data[g * dim + d];
      if (!(inv_var > 0.0) || !std::isfinite(inv_var)) {
        return absl::InvalidArgumentError(absl::StrCat(
            in.name(), ": byte ", inv_vars_offset, ": ", where, "Gaussian ", g, ", dimension ", d,
            ": inverse variance ", inv_var, " is not a finite number > 0"));
      }
      spec->means.push_back(static_cast<float>(means_invvars.data[g * dim + d] / inv_var));
      spec->variances.push_back(static_cast<float>(1.0 / inv_var));
    }
  }
  if (spec->gauss_begin.empty()) spec->gauss_begin.push_back(0);
  spec->weights.insert(spec->weights.end(), weights.begin(), weights.end());
  spec->gauss_begin.push_back(static_cast<uint32_t>(spec->weights.size()));
  return absl::OkStatus();
}

absl::StatusOr<GmmModelSpec> ReadAmDiagGmm(KaldiReader& in) {
  GmmModelSpec spec;
  GMM_RETURN_IF_ERROR(in.Expect("<DIMENSION>"));
  GMM_ASSIGN_OR_RETURN(spec.dim, in.Int32());
  if (spec.dim < 1) return in.Error(absl::StrCat("bad dimension ", spec.dim));
  GMM_RETURN_IF_ERROR(in.Expect("<NUMPDFS>"));
  GMM_ASSIGN_OR_RETURN(int32_t num_pdfs, in.Int32());
  if (num_pdfs < 1) return in.Error(absl::StrCat("bad number of pdfs ", num_pdfs));
  spec.gauss_begin.push_back(0);
  for (int32_t pdf = 0; pdf < num_pdfs; ++pdf) {
    GMM_RETURN_IF_ERROR(ReadDiagGmm(in, absl::StrCat("pdf ", pdf, ": "), &spec));
  }
  return spec;
}

// The transition-ids the tuples make (the arcs of their topology states), counted in 64 bits
// before TransitionModel::Create counts them in 32: more than the log-probabilities the file has
// is an error. Tuples that name no topology state are left for Create to report.
absl::Status CheckTransitionIdCount(KaldiReader& in, const HmmTopology& topo,
                                    const std::vector<TransitionTuple>& tuples,
                                    size_t num_log_probs) {
  uint64_t num_ids = 0;
  for (const TransitionTuple& t : tuples) {
    if (t.phone <= 0 || size_t(t.phone) >= topo.phone_to_entry.size()) continue;
    const int32_t e = topo.phone_to_entry[t.phone];
    if (e < 0 || size_t(e) >= topo.entries.size() || t.hmm_state < 0 ||
        size_t(t.hmm_state) >= topo.entries[e].size()) {
      continue;
    }
    num_ids += topo.entries[e][t.hmm_state].transitions.size();
  }
  if (num_ids + 1 > num_log_probs) {
    return in.Error(absl::StrCat("the transition tuples make ", num_ids,
                                 " transition-ids, but there are ", num_log_probs,
                                 " log-probabilities (one more than the transition-ids)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TransitionModel> ReadTransitionModel(KaldiReader& in) {
  GMM_RETURN_IF_ERROR(in.Expect("<TransitionModel>"));
  GMM_ASSIGN_OR_RETURN(HmmTopology topo, ReadKaldiTopology(in));
  std::vector<TransitionTuple> tuples;
  GMM_ASSIGN_OR_RETURN(std::string token, in.Token());
  const bool triples = token == "<Triples>";
  if (!triples && token != "<Tuples>") {
    return in.Error(absl::StrCat("expected <Triples> or <Tuples>, found ", token));
  }
  GMM_ASSIGN_OR_RETURN(int32_t num_tuples, in.Int32());
  if (num_tuples < 0 || num_tuples > 10000000) {
    return in.Error(absl::StrCat("bad number of transition tuples ", num_tuples));
  }
  GMM_RETURN_IF_ERROR(in.CheckRoom(uint64_t(num_tuples), (triples ? 3 : 4) * MinIntBytes(in),
                                   10000000, "transition tuples"));
  tuples.resize(num_tuples);
  for (auto& t : tuples) {
    GMM_ASSIGN_OR_RETURN(t.phone, in.Int32());
    GMM_ASSIGN_OR_RETURN(t.hmm_state, in.Int32());
    GMM_ASSIGN_OR_RETURN(t.forward_pdf, in.Int32());
    if (triples) {
      t.self_loop_pdf = t.forward_pdf;
    } else {
      GMM_ASSIGN_OR_RETURN(t.self_loop_pdf, in.Int32());
    }
    if (t.forward_pdf > kMaxPdfId || t.self_loop_pdf > kMaxPdfId) {
      return in.Error(absl::StrCat("pdf-id ", std::max(t.forward_pdf, t.self_loop_pdf),
                                   " is out of range (at most ", kMaxPdfId, ")"));
    }
  }
  GMM_RETURN_IF_ERROR(in.Expect(triples ? "</Triples>" : "</Tuples>"));
  GMM_RETURN_IF_ERROR(in.Expect("<LogProbs>"));
  GMM_ASSIGN_OR_RETURN(std::vector<float> log_probs, in.FloatVector());
  GMM_RETURN_IF_ERROR(in.Expect("</LogProbs>"));
  GMM_RETURN_IF_ERROR(in.Expect("</TransitionModel>"));
  GMM_RETURN_IF_ERROR(CheckTransitionIdCount(in, topo, tuples, log_probs.size()));
  auto tm = TransitionModel::Create(std::move(topo), std::move(tuples), std::move(log_probs));
  if (!tm.ok()) return in.Error(tm.status().message());
  return tm;
}

absl::StatusOr<GmmModel> ReadModel(std::istream& is, const std::string& name) {
  const bool binary = KaldiReader::ConsumeBinaryMarker(is);
  KaldiReader in(is, name, binary);
  GMM_ASSIGN_OR_RETURN(TransitionModel tm, ReadTransitionModel(in));
  GMM_ASSIGN_OR_RETURN(GmmModelSpec spec, ReadAmDiagGmm(in));
  if (size_t(tm.NumPdfs()) != spec.gauss_begin.size() - 1) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the transition model has ",
                                                   tm.NumPdfs(), " pdfs, the GMMs ",
                                                   spec.gauss_begin.size() - 1));
  }
  spec.hmm = std::move(tm);
  spec.source_format = "kaldi";
  auto model = GmmModel::Create(std::move(spec));
  if (!model.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", model.status().message()));
  }
  return model;
}

}  // namespace

absl::StatusOr<TransitionModel> ReadKaldiTransitionModel(KaldiReader& in) {
  return CatchAllocation(in.name(), [&] { return ReadTransitionModel(in); });
}

void WriteKaldiTransitionModel(const TransitionModel& tm, KaldiWriter& out) {
  const HmmTopology& topo = tm.topology();
  out.Token("<TransitionModel>");
  out.Newline();
  out.Token("<Topology>");
  out.Newline();
  if (out.binary()) {
    out.Int32Vector(topo.phones);
    out.Int32Vector(topo.phone_to_entry);
    bool is_hmm = true;
    for (const auto& entry : topo.entries) {
      for (const auto& s : entry) is_hmm = is_hmm && s.forward_pdf_class == s.self_loop_pdf_class;
    }
    if (!is_hmm) out.Int32(-1);
    out.Int32(static_cast<int32_t>(topo.entries.size()));
    for (const auto& entry : topo.entries) {
      out.Int32(static_cast<int32_t>(entry.size()));
      for (const auto& s : entry) {
        out.Int32(s.forward_pdf_class);
        if (!is_hmm) out.Int32(s.self_loop_pdf_class);
        out.Int32(static_cast<int32_t>(s.transitions.size()));
        for (const auto& [dst, prob] : s.transitions) {
          out.Int32(dst);
          out.Float(prob);
        }
      }
    }
  } else {
    for (size_t e = 0; e < topo.entries.size(); ++e) {
      out.Token("<TopologyEntry>");
      out.Newline();
      out.Token("<ForPhones>");
      out.Newline();
      for (int32_t phone : topo.phones) {
        if (topo.phone_to_entry[phone] == static_cast<int32_t>(e)) out.Int32(phone);
      }
      out.Newline();
      out.Token("</ForPhones>");
      out.Newline();
      const auto& entry = topo.entries[e];
      for (size_t s = 0; s < entry.size(); ++s) {
        out.Token("<State>");
        out.Int32(static_cast<int32_t>(s));
        const HmmState& state = entry[s];
        if (state.forward_pdf_class != kNoPdf) {
          if (state.forward_pdf_class == state.self_loop_pdf_class) {
            out.Token("<PdfClass>");
            out.Int32(state.forward_pdf_class);
          } else {
            out.Token("<ForwardPdfClass>");
            out.Int32(state.forward_pdf_class);
            out.Token("<SelfLoopPdfClass>");
            out.Int32(state.self_loop_pdf_class);
          }
        }
        for (const auto& [dst, prob] : state.transitions) {
          out.Token("<Transition>");
          out.Int32(dst);
          out.Float(prob);
        }
        out.Token("</State>");
        out.Newline();
      }
      out.Token("</TopologyEntry>");
      out.Newline();
    }
  }
  out.Token("</Topology>");
  out.Newline();
  bool triples = true;
  for (const auto& t : tm.tuples()) triples = triples && t.forward_pdf == t.self_loop_pdf;
  out.Token(triples ? "<Triples>" : "<Tuples>");
  out.Int32(tm.NumTransitionStates());
  out.Newline();
  for (const auto& t : tm.tuples()) {
    out.Int32(t.phone);
    out.Int32(t.hmm_state);
    out.Int32(t.forward_pdf);
    if (!triples) out.Int32(t.self_loop_pdf);
    out.Newline();
  }
  out.Token(triples ? "</Triples>" : "</Tuples>");
  out.Newline();
  out.Token("<LogProbs>");
  out.Newline();
  out.FloatVector(tm.log_probs().data(), tm.log_probs().size());
  out.Token("</LogProbs>");
  out.Newline();
  out.Token("</TransitionModel>");
  out.Newline();
}

absl::StatusOr<GmmModelSpec> ReadKaldiAmDiagGmm(KaldiReader& in) {
  return CatchAllocation(in.name(), [&] { return ReadAmDiagGmm(in); });
}

void WriteKaldiDiagGmm(const GmmModel& model, int32_t pdf, KaldiWriter& out) {
  const int32_t dim = model.dim();
  const int32_t n = model.num_gauss_in(pdf);
  const uint32_t g0 = model.gauss_begin(pdf);
  std::vector<float> weights(n);
  Matrix means_invvars(n, dim), inv_vars(n, dim);
  for (int32_t i = 0; i < n; ++i) {
    weights[i] = model.weight(g0 + i);
    const auto mean = model.mean(g0 + i);
    const auto var = model.variance(g0 + i);
    for (int32_t d = 0; d < dim; ++d) {
      ToKaldiParameters(mean[d], var[d], &means_invvars.at(i, d), &inv_vars.at(i, d));
    }
  }
  // The gconsts Kaldi computes from what it stores. A GmmModel's weights are >= 0 and its
  // parameters finite, so this cannot fail; its own gconsts are the fallback all the same.
  auto kaldi_gconsts = KaldiGconsts(weights, means_invvars, inv_vars);
  std::vector<float> gconsts(n);
  for (int32_t i = 0; i < n; ++i) {
    gconsts[i] =
        kaldi_gconsts.ok() ? (*kaldi_gconsts)[i] : static_cast<float>(model.gconst(g0 + i));
  }
  out.Token("<DiagGMM>");
  out.Newline();
  out.Token("<GCONSTS>");
  out.FloatVector(gconsts.data(), gconsts.size());
  out.Token("<WEIGHTS>");
  out.FloatVector(weights.data(), weights.size());
  out.Token("<MEANS_INVVARS>");
  out.FloatMatrix(means_invvars);
  out.Token("<INV_VARS>");
  out.FloatMatrix(inv_vars);
  out.Token("</DiagGMM>");
  out.Newline();
}

void WriteKaldiAmDiagGmm(const GmmModel& model, KaldiWriter& out) {
  out.Token("<DIMENSION>");
  out.Int32(model.dim());
  out.Token("<NUMPDFS>");
  out.Int32(model.num_states());
  for (int32_t s = 0; s < model.num_states(); ++s) WriteKaldiDiagGmm(model, s, out);
}

absl::StatusOr<GmmModel> ReadKaldiDiagGmmFile(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  std::istream& is = input->stream();
  KaldiReader in(is, input->name(), KaldiReader::ConsumeBinaryMarker(is));
  GmmModelSpec spec;
  GMM_RETURN_IF_ERROR(CatchAllocation(input->name(), [&] { return ReadDiagGmm(in, "", &spec); }));
  GMM_RETURN_IF_ERROR(input->Close());
  spec.source_format = "kaldi";
  auto model = GmmModel::Create(std::move(spec));
  if (!model.ok()) {
    return absl::Status(model.status().code(),
                        absl::StrCat(input->name(), ": ", model.status().message()));
  }
  return model;
}

absl::Status WriteKaldiDiagGmmFile(const GmmModel& model, const std::string& wxfilename,
                                   bool binary) {
  if (model.num_states() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("a Kaldi DiagGmm file holds one GMM; the model has ", model.num_states()));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> output, OutputStream::Open(wxfilename));
  KaldiWriter out(output->stream(), binary);
  out.BinaryMarker();
  WriteKaldiDiagGmm(model, 0, out);
  return output->Close();
}

absl::StatusOr<GmmModel> ReadKaldiModel(std::istream& is, const std::string& name) {
  return CatchAllocation(name, [&] { return ReadModel(is, name); });
}

absl::Status WriteKaldiModel(const GmmModel& model, std::ostream& os, bool binary) {
  if (model.hmm().empty()) {
    return absl::FailedPreconditionError(
        "a Kaldi model needs a transition model; this model has none");
  }
  KaldiWriter out(os, binary);
  out.BinaryMarker();
  WriteKaldiTransitionModel(model.hmm(), out);
  WriteKaldiAmDiagGmm(model, out);
  if (!os) return absl::DataLossError("write failed");
  return absl::OkStatus();
}

absl::StatusOr<GmmModel> ReadKaldiModelFile(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  GMM_ASSIGN_OR_RETURN(GmmModel model, ReadKaldiModel(input->stream(), input->name()));
  GMM_RETURN_IF_ERROR(input->Close());
  return model;
}

absl::StatusOr<TransitionModel> ReadKaldiTransitionModelFile(const std::string& rxfilename) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  const bool binary = KaldiReader::ConsumeBinaryMarker(input->stream());
  KaldiReader in(input->stream(), input->name(), binary);
  GMM_ASSIGN_OR_RETURN(TransitionModel model, ReadKaldiTransitionModel(in));
  // The GMMs that follow are not read; a pipe is drained so that its command does not fail on a
  // closed pipe.
  input->stream().ignore(std::numeric_limits<std::streamsize>::max());
  GMM_RETURN_IF_ERROR(input->Close());
  return model;
}

absl::Status WriteKaldiModelFile(const GmmModel& model, const std::string& wxfilename,
                                 bool binary) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<OutputStream> output, OutputStream::Open(wxfilename));
  GMM_RETURN_IF_ERROR(WriteKaldiModel(model, output->stream(), binary));
  return output->Close();
}

}  // namespace gmmscore
