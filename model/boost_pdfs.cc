#include "model/boost_pdfs.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace gmmscore {

PhonePdfs PdfsForPhones(const TransitionModel& tm, const std::vector<int32_t>& phones) {
  PhonePdfs out;
  for (const TransitionTuple& t : tm.tuples()) {
    if (std::binary_search(phones.begin(), phones.end(), t.phone)) {
      out.pdfs.push_back(t.forward_pdf);
      out.pdfs.push_back(t.self_loop_pdf);
    }
  }
  std::sort(out.pdfs.begin(), out.pdfs.end());
  out.pdfs.erase(std::unique(out.pdfs.begin(), out.pdfs.end()), out.pdfs.end());
  for (const TransitionTuple& t : tm.tuples()) {
    if (!std::binary_search(phones.begin(), phones.end(), t.phone) &&
        (std::binary_search(out.pdfs.begin(), out.pdfs.end(), t.forward_pdf) ||
         std::binary_search(out.pdfs.begin(), out.pdfs.end(), t.self_loop_pdf))) {
      out.exclusive = false;
    }
  }
  return out;
}

absl::StatusOr<GmmModel> ScalePdfWeights(const GmmModel& model, const std::vector<int32_t>& pdfs,
                                         float factor) {
  if (!(factor > 0.0f) || !std::isfinite(factor)) {
    return absl::InvalidArgumentError(
        absl::StrCat("boost factor ", factor, " is not a finite number > 0"));
  }
  GmmModelSpec spec = model.spec();
  for (const int32_t pdf : pdfs) {
    if (pdf < 0 || pdf >= model.num_states()) {
      return absl::InvalidArgumentError(
          absl::StrCat("pdf ", pdf, " is not in the model (", model.num_states(), " pdfs)"));
    }
    for (uint32_t g = model.gauss_begin(pdf); g < model.gauss_end(pdf); ++g) {
      spec.weights[g] *= factor;
    }
  }
  return GmmModel::Create(std::move(spec));
}

}  // namespace gmmscore
