#include "train/mix_up.h"

#include <cmath>
#include <queue>

#include "absl/strings/str_cat.h"

namespace gmmscore {
namespace {

struct PdfShare {
  int32_t pdf;
  int32_t num_gauss;
  float occupancy;  // occ^power, or 0 once the pdf may not grow
  bool operator<(const PdfShare& other) const {
    return occupancy / (num_gauss + 1.0e-10) < other.occupancy / (other.num_gauss + 1.0e-10);
  }
};

}  // namespace

std::vector<int32_t> SplitTargets(const std::vector<float>& occupancies, int32_t target,
                                  float power, float min_count) {
  const int32_t num_pdfs = static_cast<int32_t>(occupancies.size());
  std::priority_queue<PdfShare> queue;
  for (int32_t pdf = 0; pdf < num_pdfs; ++pdf) {
    // In double, rounded to float: Kaldi's GetSplitTargets calls the C library's pow on floats.
    queue.push({pdf, 1,
                static_cast<float>(std::pow(static_cast<double>(occupancies[size_t(pdf)]),
                                            static_cast<double>(power)))});
  }
  for (int32_t total = num_pdfs; total < target;) {
    PdfShare top = queue.top();
    if (top.occupancy == 0.0f) break;  // no pdf may grow any more
    queue.pop();
    if (static_cast<float>(top.num_gauss + 1) * min_count >= occupancies[size_t(top.pdf)]) {
      top.occupancy = 0.0f;
    } else {
      ++top.num_gauss;
      ++total;
    }
    queue.push(top);
  }
  std::vector<int32_t> targets(static_cast<size_t>(num_pdfs));
  for (; !queue.empty(); queue.pop()) targets[size_t(queue.top().pdf)] = queue.top().num_gauss;
  return targets;
}

absl::StatusOr<GmmModel> SplitPdfs(const GmmModel& model, const std::vector<int32_t>& targets,
                                   float perturb_factor, NormalDraw normal) {
  if (targets.size() != size_t(model.num_states())) {
    return absl::InvalidArgumentError(
        absl::StrCat("splitting needs one target per pdf: ", targets.size(), " for ",
                     model.num_states(), " pdfs"));
  }
  const GmmModelSpec& in = model.spec();
  const size_t dim = size_t(in.dim);
  GmmModelSpec out = in;
  out.weights.clear();
  out.means.clear();
  out.variances.clear();
  out.gauss_begin.assign(1, 0);
  for (int32_t pdf = 0; pdf < model.num_states(); ++pdf) {
    const size_t begin = in.gauss_begin[pdf], end = in.gauss_begin[pdf + 1];
    std::vector<float> weights(in.weights.begin() + ptrdiff_t(begin),
                               in.weights.begin() + ptrdiff_t(end));
    std::vector<float> means(in.means.begin() + ptrdiff_t(begin * dim),
                             in.means.begin() + ptrdiff_t(end * dim));
    std::vector<float> vars(in.variances.begin() + ptrdiff_t(begin * dim),
                            in.variances.begin() + ptrdiff_t(end * dim));
    while (weights.size() < size_t(targets[size_t(pdf)])) {
      size_t heaviest = 0;
      for (size_t g = 1; g < weights.size(); ++g) {
        if (weights[g] > weights[heaviest]) heaviest = g;
      }
      weights[heaviest] /= 2.0f;
      weights.push_back(weights[heaviest]);
      const size_t from = heaviest * dim, to = means.size();
      means.resize(to + dim);
      vars.resize(to + dim);
      for (size_t d = 0; d < dim; ++d) {
        const double shift =
            perturb_factor * normal() * std::sqrt(static_cast<double>(vars[from + d]));
        vars[to + d] = vars[from + d];
        means[to + d] = static_cast<float>(means[from + d] + shift);
        means[from + d] = static_cast<float>(means[from + d] - shift);
      }
    }
    out.weights.insert(out.weights.end(), weights.begin(), weights.end());
    out.means.insert(out.means.end(), means.begin(), means.end());
    out.variances.insert(out.variances.end(), vars.begin(), vars.end());
    out.gauss_begin.push_back(uint32_t(out.weights.size()));
  }
  return GmmModel::Create(std::move(out));
}

}  // namespace gmmscore
