#include "model/tree_transition_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

// Kaldi's Tuple::operator<: phone, then HMM state, then the forward and self-loop pdfs.
bool TupleLess(const TransitionTuple& a, const TransitionTuple& b) {
  return std::tie(a.phone, a.hmm_state, a.forward_pdf, a.self_loop_pdf) <
         std::tie(b.phone, b.hmm_state, b.forward_pdf, b.self_loop_pdf);
}

}  // namespace

int32_t NumPdfClasses(const std::vector<HmmState>& entry) {
  int32_t most = 0;
  for (const HmmState& state : entry) {
    most = std::max({most, state.forward_pdf_class, state.self_loop_pdf_class});
  }
  return most + 1;
}

absl::StatusOr<TransitionModel> TransitionModelFromTree(const ContextDependency& tree,
                                                        const HmmTopology& topology,
                                                        std::vector<std::string>* warnings) {
  if (topology.phones.empty()) return absl::InvalidArgumentError("the topology has no phones");
  for (const auto& entry : topology.entries) {
    for (const HmmState& state : entry) {
      if (state.forward_pdf_class != state.self_loop_pdf_class) {
        return absl::UnimplementedError(
            "topologies with separate self-loop pdf classes (chain models) are not supported");
      }
    }
  }
  // For each pdf, the (phone, pdf class) pairs that reach it (Kaldi's GetPdfInfo).
  const int32_t num_pdfs = tree.NumPdfs();
  std::vector<std::vector<std::pair<int32_t, int32_t>>> pdf_info(static_cast<size_t>(num_pdfs));
  for (const int32_t phone : topology.phones) {
    const int32_t num_classes = NumPdfClasses(topology.TopologyForPhone(phone));
    for (int32_t pdf_class = 0; pdf_class < num_classes; ++pdf_class) {
      const TreeEvent event = {{kPdfClassKey, pdf_class}, {tree.central_position(), phone}};
      const std::vector<int32_t> pdfs = tree.to_pdf().MultiMap(event);
      if (pdfs.empty()) {
        warnings->push_back(absl::StrCat(
            "ContextDependency::GetPdfInfo, no pdfs returned for "
            "position ",
            pdf_class, " of phone ", phone, ".   Continuing but this is a serious error."));
      }
      for (const int32_t pdf : pdfs) {
        if (pdf < 0) {
          return absl::InvalidArgumentError(absl::StrCat("the tree maps pdf class ", pdf_class,
                                                         " of phone ", phone, " to pdf ", pdf));
        }
        pdf_info[size_t(pdf)].emplace_back(phone, pdf_class);
      }
    }
  }
  // The phones' HMM states by (phone, pdf class).
  std::map<std::pair<int32_t, int32_t>, std::vector<int32_t>> states_of;
  for (const int32_t phone : topology.phones) {
    const auto& entry = topology.TopologyForPhone(phone);
    for (size_t s = 0; s < entry.size(); ++s) {
      if (entry[s].forward_pdf_class != kNoPdf) {
        states_of[{phone, entry[s].forward_pdf_class}].push_back(int32_t(s));
      }
    }
  }
  std::vector<TransitionTuple> tuples;
  for (int32_t pdf = 0; pdf < num_pdfs; ++pdf) {
    for (const auto& [phone, pdf_class] : pdf_info[size_t(pdf)]) {
      const auto states = states_of.find({phone, pdf_class});
      if (states == states_of.end()) {
        return absl::InvalidArgumentError(absl::StrCat("the tree gives pdf class ", pdf_class,
                                                       " of phone ", phone,
                                                       " a pdf, but no HMM state has that class"));
      }
      for (const int32_t hmm_state : states->second) tuples.push_back({phone, hmm_state, pdf, pdf});
    }
  }
  std::sort(tuples.begin(), tuples.end(), TupleLess);
  // Each transition's log-probability (Kaldi's InitializeProbs), in the order of transition-ids.
  std::vector<float> log_probs = {0.0f};
  for (const TransitionTuple& t : tuples) {
    for (const auto& [dst, prob] :
         topology.TopologyForPhone(t.phone)[size_t(t.hmm_state)].transitions) {
      if (!(prob > 0.0f)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "phone ", t.phone, ", HMM state ", t.hmm_state, ": transition to state ", dst,
            " has probability ", prob, " (remove that transition from the topology)"));
      }
      log_probs.push_back(std::log(prob));
    }
  }
  return TransitionModel::Create(topology, std::move(tuples), std::move(log_probs));
}

}  // namespace gmmscore
