// Reader and writer of Sphinx continuous models (see sphinx_model.h for the mapping): the
// Gaussians, mixture weights and transition matrices, and the HMM they map to. The s3 file
// container is in sphinx_s3io.h, the model definition (mdef) in sphinx_mdef.h.
#include "formats/sphinx_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "formats/read_limits.h"
#include "formats/sphinx_mdef.h"
#include "formats/sphinx_s3io.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Rows of weights or probabilities whose sum is this close to 1 are already normalised: float
// rounding of normalised values stays far below it, and rescaling them would change their bits.
constexpr double kNormalisedTolerance = 1e-6;

std::string FilePathIn(const std::string& dir, const char* name) {
  return (std::filesystem::path(dir) / name).string();
}

absl::Status RejectStreams(S3Reader& in, int32_t n_feat) {
  if (n_feat == 1) return absl::OkStatus();
  return UnsupportedSphinxModel(in.path(), absl::StrCat(n_feat, " feature streams"));
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
  const uint64_t dims_at = in.offset();
  GMM_ASSIGN_OR_RETURN(g.n_mgau, PositiveInt32(in, "number of codebooks"));
  GMM_ASSIGN_OR_RETURN(int32_t n_feat, PositiveInt32(in, "number of feature streams"));
  GMM_ASSIGN_OR_RETURN(g.n_density, PositiveInt32(in, "number of densities"));
  GMM_RETURN_IF_ERROR(RejectStreams(in, n_feat));
  GMM_ASSIGN_OR_RETURN(g.veclen, PositiveInt32(in, "vector length"));
  g.data_offset = in.offset() + 4;
  uint64_t values = 0;
  if (!CheckedMul(uint64_t(g.n_mgau), uint64_t(g.n_density), uint64_t(g.veclen), &values)) {
    return in.Error(dims_at,
                    absl::StrCat(g.n_mgau, " codebooks x ", g.n_density, " densities x ", g.veclen,
                                 " dimensions are more values than any file holds"));
  }
  GMM_ASSIGN_OR_RETURN(g.data, ReadValues(in, values));
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
    return UnsupportedSphinxModel(means_path, absl::StrCat("semi-continuous model (", shared, ")"));
  }
  if (means.n_mgau < weights.n_senone) {
    return UnsupportedSphinxModel(means_path,
                                  absl::StrCat("phonetically tied mixtures (", shared, ")"));
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
  if (int64_t{n_cols} != int64_t{t.n_emit} + 1) {
    return in.Error(cols_at, absl::StrCat(n_cols, " destination states for ", t.n_emit,
                                          " source states; expected one more (the final)"));
  }
  const uint64_t data_offset = in.offset() + 4;
  uint64_t values = 0;
  if (!CheckedMul(uint64_t(t.n_tmat), uint64_t(t.n_emit), uint64_t(n_cols), &values)) {
    return in.Error(cols_at, absl::StrCat(t.n_tmat, " matrices of ", t.n_emit, " x ", n_cols,
                                          " are more values than any file holds"));
  }
  GMM_ASSIGN_OR_RETURN(t.probs, ReadValues(in, values));
  GMM_RETURN_IF_ERROR(in.Finish());
  const int32_t n_emit = t.n_emit;
  GMM_RETURN_IF_ERROR(NormaliseRows(
      path, data_offset, n_cols, t.probs,
      [n_emit](size_t r) { return absl::StrCat("matrix ", r / n_emit, ", row ", r % n_emit); },
      "column", "transition probability"));
  return t;
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
  if (weights.data.size() > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(weights_path, ": ", weights.data.size(), " Gaussians are more than 2^32 - 1"));
  }
  GmmModelSpec spec;
  spec.dim = means.veclen;
  spec.gauss_begin.reserve(size_t(weights.n_senone) + 1);
  for (int32_t s = 0; s <= weights.n_senone; ++s) {
    spec.gauss_begin.push_back(static_cast<uint32_t>(uint64_t(s) * uint64_t(weights.n_density)));
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
  GMM_RETURN_IF_ERROR(
      CheckMdefRanges(mdef_path, mdef, n_senone, tmats_path, tmats.n_tmat, tmats.n_emit));
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

absl::StatusOr<GmmModel> ReadModel(const std::string& dir) {
  GMM_ASSIGN_OR_RETURN(GmmModelSpec spec, ReadGaussians(dir));
  GMM_RETURN_IF_ERROR(ReadHmm(dir, spec));
  spec.source_format = "sphinx";
  auto model = GmmModel::Create(std::move(spec));
  if (!model.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(dir, ": ", model.status().message()));
  }
  return model;
}

}  // namespace

absl::StatusOr<GmmModel> ReadSphinxModel(const std::string& dir) {
  return CatchAllocation(dir, [&] { return ReadModel(dir); });
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
