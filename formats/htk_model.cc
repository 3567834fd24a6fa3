// Reader and writer of HTK MMFs (see htk_model.h for the mapping): builds the canonical model
// from the definitions that htk_mmf_parser.h reads, and writes a model as an MMF.
#include "formats/htk_model.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "formats/htk_mmf_parser.h"
#include "formats/read_limits.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

float LogProb(float prob) { return static_cast<float>(std::log(static_cast<double>(prob))); }

// HTK state i of `t` is topology state i-1; emitting state i has pdf class i-2.
std::vector<HmmState> TopologyEntry(const HtkTransP& t) {
  std::vector<HmmState> entry(t.n);
  for (int32_t from = 0; from < t.n; ++from) {
    HmmState& state = entry[from];
    if (from > 0 && from < t.n - 1) state.forward_pdf_class = state.self_loop_pdf_class = from - 1;
    for (int32_t to = 0; to < t.n; ++to) {
      const float prob = t.probs[size_t(from) * t.n + to];
      if (prob > 0.0f) state.transitions.emplace_back(to, prob);
    }
  }
  return entry;
}

// Phone p is HMM p-1; its emitting topology states are its transition-states, numbered in order.
absl::StatusOr<TransitionModel> BuildTransitionModel(const std::vector<HtkHmmDef>& hmms,
                                                     const std::vector<int32_t>& pdfs,
                                                     const std::string& name) {
  HmmTopology topo;
  std::vector<TransitionTuple> tuples;
  std::vector<float> log_probs = {0.0f};  // transition-id 0 is unused
  const int32_t num_phones = static_cast<int32_t>(hmms.size());
  topo.phone_to_entry.assign(num_phones + 1, -1);
  for (int32_t phone = 1; phone <= num_phones; ++phone) {
    const HtkHmmDef& hmm = hmms[phone - 1];
    topo.phones.push_back(phone);
    topo.phone_to_entry[phone] = phone - 1;
    topo.entries.push_back(TopologyEntry(hmm.transp));
    for (int32_t s = 1; s + 1 < hmm.transp.n; ++s) {
      const int32_t pdf = pdfs[hmm.states[s + 1]];
      tuples.push_back({.phone = phone, .hmm_state = s, .forward_pdf = pdf, .self_loop_pdf = pdf});
      for (const auto& [dst, prob] : topo.entries.back()[s].transitions) {
        log_probs.push_back(LogProb(prob));
      }
    }
  }
  auto tm = TransitionModel::Create(std::move(topo), std::move(tuples), std::move(log_probs));
  if (!tm.ok()) return absl::InvalidArgumentError(absl::StrCat(name, ": ", tm.status().message()));
  return tm;
}

// One GmmModel state per used HtkStateDef, in definition order, and the HMMs as phones.
absl::StatusOr<GmmModelSpec> BuildSpec(const HtkMmf& mmf, const std::string& name) {
  GmmModelSpec spec;
  spec.dim = mmf.dim;
  spec.source_format = "htk";
  spec.gauss_begin.push_back(0);
  std::vector<int32_t> pdfs(mmf.states.size(), kNoPdf);  // GmmModel state of each used one
  int32_t num_pdfs = 0;
  for (size_t i = 0; i < mmf.states.size(); ++i) {
    const HtkStateDef& state = mmf.states[i];
    if (!state.used) continue;
    pdfs[i] = num_pdfs++;
    spec.weights.insert(spec.weights.end(), state.weights.begin(), state.weights.end());
    spec.means.insert(spec.means.end(), state.means.begin(), state.means.end());
    spec.variances.insert(spec.variances.end(), state.variances.begin(), state.variances.end());
    spec.gauss_begin.push_back(static_cast<uint32_t>(spec.weights.size()));
    spec.state_names.push_back(state.name);
  }
  GMM_ASSIGN_OR_RETURN(spec.hmm, BuildTransitionModel(mmf.hmms, pdfs, name));
  return spec;
}

// ---- Writing ----

void AppendFloat(float value, std::string& out) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  out.append(buf, result.ptr);
}

std::string Quoted(const std::string& name) {
  std::string out = "\"";
  for (const char c : name) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void AppendVector(absl::string_view keyword, std::span<const float> v, std::string& out) {
  absl::StrAppend(&out, keyword, " ", v.size(), "\n");
  for (const float x : v) {
    out += ' ';
    AppendFloat(x, out);
  }
  out += '\n';
}

// HTK's gconst: D log(2 pi) + log |Sigma|, without the weight.
float HtkGconst(std::span<const float> variance) {
  double g = static_cast<double>(variance.size()) * std::log(2.0 * std::numbers::pi);
  for (const float v : variance) g += std::log(static_cast<double>(v));
  return static_cast<float>(g);
}

std::string StateMacro(const GmmModel& model, int32_t state, const std::string& name) {
  std::string out =
      absl::StrCat("~s ", Quoted(name), "\n<NUMMIXES> ", model.num_gauss_in(state), "\n");
  for (int32_t i = 0; i < model.num_gauss_in(state); ++i) {
    const int64_t g = model.gauss_begin(state) + i;
    absl::StrAppend(&out, "<MIXTURE> ", i + 1, " ");
    AppendFloat(model.weight(g), out);
    out += '\n';
    AppendVector("<MEAN>", model.mean(g), out);
    AppendVector("<VARIANCE>", model.variance(g), out);
    out += "<GCONST> ";
    AppendFloat(HtkGconst(model.variance(g)), out);
    out += '\n';
  }
  return out;
}

// The state names when they can be macro names (all there, all different), else "s<index>".
std::vector<std::string> StateMacroNames(const GmmModel& model) {
  const std::vector<std::string>& names = model.state_names();
  const std::set<std::string> unique(names.begin(), names.end());
  if (!names.empty() && unique.size() == names.size() && !unique.contains("")) return names;
  std::vector<std::string> generated;
  for (int32_t s = 0; s < model.num_states(); ++s) generated.push_back(absl::StrCat("s", s));
  return generated;
}

// Where an emitting (phone, HMM state) finds its pdf and its first transition-id.
struct EmittingState {
  int32_t pdf = kNoPdf;
  int32_t first_tid = 0;
};
using EmittingStates = std::map<std::pair<int32_t, int32_t>, EmittingState>;

// The emitting states of a transition model of HTK's shape: for every phone a non-emitting entry
// state 0, emitting states 1..K-2 each with one tuple whose two pdfs agree, and every GmmModel
// state used; nullopt for any other transition model.
std::optional<EmittingStates> HtkShape(const GmmModel& model) {
  const TransitionModel& tm = model.hmm();
  if (tm.empty()) return std::nullopt;
  EmittingStates states;
  std::vector<bool> pdf_used(model.num_states(), false);
  int32_t tid = 1;
  for (const TransitionTuple& t : tm.tuples()) {
    const auto& entry = tm.topology().TopologyForPhone(t.phone);
    if (t.forward_pdf != t.self_loop_pdf || t.forward_pdf >= model.num_states() ||
        t.hmm_state < 1 || t.hmm_state + 1 >= static_cast<int32_t>(entry.size()) ||
        !states.emplace(std::pair(t.phone, t.hmm_state), EmittingState{t.forward_pdf, tid})
             .second) {
      return std::nullopt;
    }
    pdf_used[t.forward_pdf] = true;
    tid += static_cast<int32_t>(entry[t.hmm_state].transitions.size());
  }
  size_t covered = 0;
  for (const int32_t phone : tm.topology().phones) {
    const auto& entry = tm.topology().TopologyForPhone(phone);
    if (entry.size() < 3 || entry[0].forward_pdf_class != kNoPdf) return std::nullopt;
    for (int32_t s = 1; s + 1 < static_cast<int32_t>(entry.size()); ++s) {
      if (!states.contains({phone, s})) return std::nullopt;
      ++covered;
    }
  }
  if (covered != states.size() || std::ranges::find(pdf_used, false) != pdf_used.end()) {
    return std::nullopt;
  }
  return states;
}

// The probability to write: alignment uses the log-probability, but the topology keeps the one it
// came from, which is written instead when the two agree so that a round trip is bit-exact.
float TransitionProb(float topology_prob, float log_prob) {
  if (LogProb(topology_prob) == log_prob) return topology_prob;
  return static_cast<float>(std::exp(static_cast<double>(log_prob)));
}

void AppendTransP(const std::vector<std::vector<float>>& probs, std::string& out) {
  absl::StrAppend(&out, "<TRANSP> ", probs.size(), "\n");
  for (const auto& row : probs) {
    for (const float p : row) {
      out += ' ';
      AppendFloat(p, out);
    }
    out += '\n';
  }
}

std::string PhoneHmm(const GmmModel& model, int32_t phone, const EmittingStates& emitting,
                     const std::vector<std::string>& names) {
  const TransitionModel& tm = model.hmm();
  const auto& entry = tm.topology().TopologyForPhone(phone);
  const int32_t n = static_cast<int32_t>(entry.size());
  std::string out = absl::StrCat("~h \"p", phone, "\"\n<BEGINHMM>\n<NUMSTATES> ", n, "\n");
  std::vector<std::vector<float>> probs(n, std::vector<float>(n, 0.0f));
  for (int32_t s = 0; s < n; ++s) {
    const auto it = emitting.find({phone, s});
    int32_t tid = 0;  // of the next transition of an emitting state
    if (it != emitting.end()) {
      absl::StrAppend(&out, "<STATE> ", s + 1, "\n~s ", Quoted(names[it->second.pdf]), "\n");
      tid = it->second.first_tid;
    }
    for (const auto& [dst, prob] : entry[s].transitions) {
      probs[s][dst] = tid == 0 ? prob : TransitionProb(prob, tm.TransitionIdToLogProb(tid++));
    }
  }
  AppendTransP(probs, out);
  return out + "<ENDHMM>\n";
}

// entry -> state -> exit, with a self-loop of 0.5.
std::string SingleStateHmm(int32_t state, const std::string& name) {
  std::string out = absl::StrCat("~h \"h", state, "\"\n<BEGINHMM>\n<NUMSTATES> 3\n<STATE> 2\n~s ",
                                 Quoted(name), "\n");
  AppendTransP({{0.0f, 1.0f, 0.0f}, {0.0f, 0.5f, 0.5f}, {0.0f, 0.0f, 0.0f}}, out);
  return out + "<ENDHMM>\n";
}

absl::StatusOr<GmmModel> ReadModel(std::istream& is, const std::string& name) {
  std::string text{std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>()};
  if (is.bad()) return absl::DataLossError(absl::StrCat(name, ": read failed"));
  GMM_ASSIGN_OR_RETURN(HtkMmf mmf, ParseHtkMmf(std::move(text), name));
  GMM_ASSIGN_OR_RETURN(GmmModelSpec spec, BuildSpec(mmf, name));
  auto model = GmmModel::Create(std::move(spec));
  if (!model.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", model.status().message()));
  }
  return model;
}

}  // namespace

absl::StatusOr<GmmModel> ReadHtkModel(std::istream& is, const std::string& name) {
  return CatchAllocation(name, [&] { return ReadModel(is, name); });
}

absl::Status WriteHtkModel(const GmmModel& model, std::ostream& os) {
  const std::vector<std::string> names = StateMacroNames(model);
  os << "~o\n<STREAMINFO> 1 " << model.dim() << "\n<VECSIZE> " << model.dim()
     << "<NULLD><USER><DIAGC>\n";
  for (int32_t s = 0; s < model.num_states(); ++s) os << StateMacro(model, s, names[s]);
  if (const auto emitting = HtkShape(model)) {
    for (const int32_t phone : model.hmm().topology().phones) {
      os << PhoneHmm(model, phone, *emitting, names);
    }
  } else {
    for (int32_t s = 0; s < model.num_states(); ++s) os << SingleStateHmm(s, names[s]);
  }
  if (!os) return absl::DataLossError("write failed");
  return absl::OkStatus();
}

}  // namespace gmmscore
