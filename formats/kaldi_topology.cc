#include "formats/kaldi_topology.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "formats/kaldi_stream.h"
#include "formats/read_limits.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Text topology: <TopologyEntry> <ForPhones> p... </ForPhones> <State> n [<PdfClass> c |
// <ForwardPdfClass> c <SelfLoopPdfClass> c] (<Transition> dst prob)* </State> ... </TopologyEntry>
absl::StatusOr<HmmTopology> ReadTextTopology(KaldiReader& in) {
  HmmTopology topo;
  while (true) {
    GMM_ASSIGN_OR_RETURN(std::string token, in.Token());
    if (token == "</Topology>") break;
    if (token != "<TopologyEntry>") {
      return in.Error(absl::StrCat("expected <TopologyEntry> or </Topology>, found ", token));
    }
    GMM_RETURN_IF_ERROR(in.Expect("<ForPhones>"));
    std::vector<int32_t> phones;
    while (true) {
      GMM_ASSIGN_OR_RETURN(std::string word, in.Token());
      if (word == "</ForPhones>") break;
      int32_t phone = 0;
      if (!absl::SimpleAtoi(word, &phone)) {
        return in.Error(absl::StrCat("expected a phone number, found ", word.substr(0, 40)));
      }
      if (phone <= 0 || phone > kMaxPhoneId) {
        return in.Error(absl::StrCat("phone ", phone, " is out of range (phone ids are 1 to ",
                                     kMaxPhoneId, ")"));
      }
      phones.push_back(phone);
    }
    std::vector<HmmState> entry;
    GMM_ASSIGN_OR_RETURN(token, in.Token());
    while (token != "</TopologyEntry>") {
      if (token != "<State>") return in.Error(absl::StrCat("expected <State>, found ", token));
      GMM_ASSIGN_OR_RETURN(int32_t index, in.Int32());
      if (index != static_cast<int32_t>(entry.size())) {
        return in.Error(absl::StrCat("states must be numbered from 0 in order; expected ",
                                     entry.size(), ", found ", index));
      }
      HmmState state;
      GMM_ASSIGN_OR_RETURN(token, in.Token());
      if (token == "<PdfClass>") {
        GMM_ASSIGN_OR_RETURN(state.forward_pdf_class, in.Int32());
        state.self_loop_pdf_class = state.forward_pdf_class;
        GMM_ASSIGN_OR_RETURN(token, in.Token());
      } else if (token == "<ForwardPdfClass>") {
        GMM_ASSIGN_OR_RETURN(state.forward_pdf_class, in.Int32());
        GMM_RETURN_IF_ERROR(in.Expect("<SelfLoopPdfClass>"));
        GMM_ASSIGN_OR_RETURN(state.self_loop_pdf_class, in.Int32());
        GMM_ASSIGN_OR_RETURN(token, in.Token());
      }
      while (token == "<Transition>") {
        GMM_ASSIGN_OR_RETURN(int32_t dst, in.Int32());
        GMM_ASSIGN_OR_RETURN(float prob, in.Float());
        state.transitions.emplace_back(dst, prob);
        GMM_ASSIGN_OR_RETURN(token, in.Token());
      }
      if (token != "</State>") return in.Error(absl::StrCat("expected </State>, found ", token));
      entry.push_back(std::move(state));
      GMM_ASSIGN_OR_RETURN(token, in.Token());
    }
    const int32_t entry_index = static_cast<int32_t>(topo.entries.size());
    topo.entries.push_back(std::move(entry));
    for (int32_t phone : phones) {
      if (static_cast<int32_t>(topo.phone_to_entry.size()) <= phone) {
        topo.phone_to_entry.resize(phone + 1, -1);
      }
      if (topo.phone_to_entry[phone] != -1) {
        return in.Error(absl::StrCat("phone ", phone, " appears in two topology entries"));
      }
      topo.phone_to_entry[phone] = entry_index;
      topo.phones.push_back(phone);
    }
  }
  std::sort(topo.phones.begin(), topo.phones.end());
  return topo;
}

absl::StatusOr<HmmTopology> ReadBinaryTopology(KaldiReader& in) {
  HmmTopology topo;
  GMM_ASSIGN_OR_RETURN(topo.phones, in.Int32Vector());
  GMM_ASSIGN_OR_RETURN(topo.phone_to_entry, in.Int32Vector());
  GMM_ASSIGN_OR_RETURN(int32_t num_entries, in.Int32());
  bool is_hmm = true;  // -1 marks the chain format, which stores separate self-loop pdf classes
  if (num_entries == -1) {
    is_hmm = false;
    GMM_ASSIGN_OR_RETURN(num_entries, in.Int32());
  }
  if (num_entries < 0 || num_entries > 100000) {
    return in.Error(absl::StrCat("bad number of topology entries ", num_entries));
  }
  // Each entry takes at least its state count, each state its pdf class(es) and transition count.
  GMM_RETURN_IF_ERROR(in.CheckRoom(uint64_t(num_entries), 5, 100000, "topology entries"));
  topo.entries.resize(num_entries);
  for (auto& entry : topo.entries) {
    GMM_ASSIGN_OR_RETURN(int32_t num_states, in.Int32());
    if (num_states < 0 || num_states > 10000) {
      return in.Error(absl::StrCat("bad number of HMM states ", num_states));
    }
    GMM_RETURN_IF_ERROR(in.CheckRoom(uint64_t(num_states), is_hmm ? 10 : 15, 10000, "HMM states"));
    entry.resize(num_states);
    for (auto& state : entry) {
      GMM_ASSIGN_OR_RETURN(state.forward_pdf_class, in.Int32());
      state.self_loop_pdf_class = state.forward_pdf_class;
      if (!is_hmm) {
        GMM_ASSIGN_OR_RETURN(state.self_loop_pdf_class, in.Int32());
      }
      GMM_ASSIGN_OR_RETURN(int32_t num_transitions, in.Int32());
      if (num_transitions < 0 || num_transitions > 10000) {
        return in.Error(absl::StrCat("bad number of transitions ", num_transitions));
      }
      GMM_RETURN_IF_ERROR(in.CheckRoom(uint64_t(num_transitions), 10, 10000, "transitions"));
      state.transitions.resize(num_transitions);
      for (auto& [dst, prob] : state.transitions) {
        GMM_ASSIGN_OR_RETURN(dst, in.Int32());
        GMM_ASSIGN_OR_RETURN(prob, in.Float());
      }
    }
  }
  return topo;
}

// Kaldi's HmmTopology::Check (see the header); the warning for a state whose probabilities do
// not sum to 1 within 0.01 is appended to `warnings`.
absl::Status CheckTopology(const HmmTopology& topo, std::vector<std::string>* warnings) {
  if (topo.entries.empty() || topo.phones.empty()) {
    return absl::InvalidArgumentError("the topology is empty");
  }
  std::vector<bool> used(topo.entries.size(), false);
  for (size_t i = 0; i < topo.phones.size(); ++i) {
    const int32_t phone = topo.phones[i];
    if (phone <= 0 || (i > 0 && phone <= topo.phones[i - 1])) {
      return absl::InvalidArgumentError("the phones must be > 0, sorted, each once");
    }
    if (size_t(phone) >= topo.phone_to_entry.size() || topo.phone_to_entry[size_t(phone)] < 0 ||
        size_t(topo.phone_to_entry[size_t(phone)]) >= topo.entries.size()) {
      return absl::InvalidArgumentError(absl::StrCat("phone ", phone, " has no topology entry"));
    }
    used[size_t(topo.phone_to_entry[size_t(phone)])] = true;
  }
  for (size_t e = 0; e < topo.entries.size(); ++e) {
    const std::vector<HmmState>& entry = topo.entries[e];
    const std::string where = absl::StrCat("topology entry ", e, ": ");
    if (!used[e]) return absl::InvalidArgumentError(absl::StrCat(where, "no phone uses it"));
    const size_t num_states = entry.size();
    if (num_states <= 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "needs an emitting state and the final state"));
    }
    if (!entry.back().transitions.empty() || entry.back().forward_pdf_class != kNoPdf) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "the last state must be final: no pdf class, no transitions"));
    }
    std::vector<bool> entered(num_states, false);
    std::vector<int32_t> classes;
    for (size_t s = 0; s < num_states; ++s) {
      const HmmState& state = entry[s];
      const std::string at = absl::StrCat(where, "state ", s, ": ");
      if (state.forward_pdf_class != kNoPdf) {
        classes.push_back(state.forward_pdf_class);
        classes.push_back(state.self_loop_pdf_class);
      }
      double total = 0.0;  // Kaldi sums in float; only the warning depends on it
      std::set<int32_t> destinations;
      for (const auto& [dst, prob] : state.transitions) {
        if (!(prob > 0.0f)) {
          return absl::InvalidArgumentError(
              absl::StrCat(at, "transition probability ", prob, " is not > 0"));
        }
        if (dst < 0 || size_t(dst) >= num_states) {
          return absl::InvalidArgumentError(absl::StrCat(at, "no state ", dst, " to go to"));
        }
        if (size_t(dst) == num_states - 1 && state.forward_pdf_class == kNoPdf) {
          return absl::InvalidArgumentError(absl::StrCat(
              at,
              "a non-emitting state may not go to the final state (Kaldi could not tell "
              "where the phone ends)"));
        }
        if (size_t(dst) == s && state.self_loop_pdf_class == kNoPdf) {
          return absl::InvalidArgumentError(
              absl::StrCat(at, "a non-emitting state may not have a self-loop"));
        }
        if (!destinations.insert(dst).second) {
          return absl::InvalidArgumentError(absl::StrCat(at, "two transitions to state ", dst));
        }
        entered[size_t(dst)] = true;
        total += prob;
      }
      if (s + 1 < num_states) {
        if (!(total > 0.0)) {
          return absl::InvalidArgumentError(absl::StrCat(at, "no transitions out"));
        }
        if (std::fabs(total - 1.0) > 0.01) {
          warnings->push_back(
              absl::StrCat("Total probability for state ", s, " in topology entry is ", total));
        }
      }
    }
    for (size_t s = 1; s < num_states; ++s) {
      if (!entered[s]) {
        return absl::InvalidArgumentError(absl::StrCat(where, "no transition into state ", s));
      }
    }
    std::sort(classes.begin(), classes.end());
    classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
    if (classes.empty() || classes.front() != 0 || classes.back() != int32_t(classes.size()) - 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, "pdf classes must be 0, 1, ... with none missing"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<HmmTopology> ReadTopology(KaldiReader& in) {
  GMM_RETURN_IF_ERROR(in.Expect("<Topology>"));
  if (!in.binary()) return ReadTextTopology(in);
  GMM_ASSIGN_OR_RETURN(HmmTopology topo, ReadBinaryTopology(in));
  GMM_RETURN_IF_ERROR(in.Expect("</Topology>"));
  return topo;
}

}  // namespace

absl::StatusOr<HmmTopology> ReadKaldiTopology(KaldiReader& in) {
  return CatchAllocation(in.name(), [&] { return ReadTopology(in); });
}

absl::StatusOr<HmmTopology> ReadKaldiTopologyFile(const std::string& rxfilename,
                                                  std::vector<std::string>* warnings) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  std::istream& is = input->stream();
  KaldiReader in(is, input->name(), KaldiReader::ConsumeBinaryMarker(is));
  GMM_ASSIGN_OR_RETURN(HmmTopology topo, ReadKaldiTopology(in));
  GMM_RETURN_IF_ERROR(input->Close());
  if (absl::Status s = CheckTopology(topo, warnings); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(input->name(), ": ", s.message()));
  }
  return topo;
}

}  // namespace gmmscore
