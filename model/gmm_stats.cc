#include "model/gmm_stats.h"

#include <span>

#include "absl/strings/str_cat.h"
#include "util/kaldi_blas.h"

namespace gmmscore {

absl::StatusOr<uint16_t> ParseGmmFlags(absl::string_view letters) {
  uint16_t flags = 0;
  for (const char c : letters) {
    switch (c) {
      case 'm':
        flags |= kGmmMeans;
        break;
      case 'v':
        flags |= kGmmVariances;
        break;
      case 'w':
        flags |= kGmmWeights;
        break;
      case 't':
        flags |= kGmmTransitions;
        break;
      case 'a':
        flags |= kGmmAll;
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat("invalid letter '", std::string(1, c),
                                                       "' in update flags '", letters,
                                                       "' (a subset of mvwt, or a)"));
    }
  }
  return flags;
}

std::string GmmFlagsToString(uint16_t flags) {
  std::string letters;
  if (flags & kGmmMeans) letters += 'm';
  if (flags & kGmmVariances) letters += 'v';
  if (flags & kGmmWeights) letters += 'w';
  if (flags & kGmmTransitions) letters += 't';
  return letters;
}

uint16_t AugmentGmmFlags(uint16_t flags) {
  flags &= kGmmAll;
  if (flags & kGmmVariances) flags |= kGmmMeans;
  return static_cast<uint16_t>(flags | kGmmWeights);
}

GmmStats GmmStats::ForModel(const GmmModel& model, uint16_t flags) {
  GmmStats stats;
  stats.dim = model.dim();
  stats.flags = AugmentGmmFlags(flags);
  stats.gauss_begin = model.spec().gauss_begin;
  const size_t num_gauss = static_cast<size_t>(model.num_gauss());
  const size_t values = num_gauss * static_cast<size_t>(model.dim());
  stats.occupancy.assign(num_gauss, 0.0);
  if (stats.flags & kGmmMeans) stats.first.assign(values, 0.0);
  if (stats.flags & kGmmVariances) stats.second.assign(values, 0.0);
  return stats;
}

double GmmStats::PdfOccupancy(int32_t pdf) const {
  return KaldiDoubleSum(std::span<const double>(occupancy).subspan(
      gauss_begin[pdf], gauss_begin[pdf + 1] - gauss_begin[pdf]));
}

double GmmStats::TotalOccupancy() const {
  double sum = 0.0;
  for (const double occ : occupancy) sum += occ;
  return sum;
}

absl::Status GmmStats::CheckMatches(const GmmModel& model) const {
  if (num_pdfs() != model.num_states()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the statistics have ", num_pdfs(), " pdfs, the model ", model.num_states()));
  }
  if (dim != model.dim()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the statistics have dimension ", dim, ", the model ", model.dim()));
  }
  for (int32_t pdf = 0; pdf < num_pdfs(); ++pdf) {
    if (num_gauss_in(pdf) != model.num_gauss_in(pdf)) {
      return absl::InvalidArgumentError(absl::StrCat("pdf ", pdf, " has ", num_gauss_in(pdf),
                                                     " Gaussians in the statistics and ",
                                                     model.num_gauss_in(pdf), " in the model"));
    }
  }
  return absl::OkStatus();
}

absl::Status GmmStats::Add(const GmmStats& other) {
  if (gauss_begin != other.gauss_begin || dim != other.dim || flags != other.flags) {
    return absl::InvalidArgumentError(absl::StrCat(
        "statistics of different shapes: ", num_pdfs(), " pdfs, ", num_gauss(),
        " Gaussians, dimension ", dim, ", flags ", GmmFlagsToString(flags), " vs. ",
        other.num_pdfs(), " pdfs, ", other.num_gauss(), " Gaussians, dimension ", other.dim,
        ", flags ", GmmFlagsToString(other.flags), " (statistics of different models?)"));
  }
  for (size_t i = 0; i < occupancy.size(); ++i) occupancy[i] += other.occupancy[i];
  for (size_t i = 0; i < first.size(); ++i) first[i] += other.first[i];
  for (size_t i = 0; i < second.size(); ++i) second[i] += other.second[i];
  total_log_like += other.total_log_like;
  total_frames += other.total_frames;
  return absl::OkStatus();
}

ModelStats ModelStats::ForModel(const GmmModel& model, uint16_t flags) {
  ModelStats stats;
  stats.transitions.assign(static_cast<size_t>(model.hmm().NumTransitionIds()) + 1, 0.0);
  stats.gmm = GmmStats::ForModel(model, flags);
  return stats;
}

absl::Status ModelStats::Add(const ModelStats& other) {
  if (transitions.size() != other.transitions.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("transition statistics of different sizes: ", transitions.size(), " vs. ",
                     other.transitions.size(), " (statistics of different models?)"));
  }
  for (size_t i = 0; i < transitions.size(); ++i) transitions[i] += other.transitions[i];
  return gmm.Add(other.gmm);
}

void GmmStats::RoundAsWritten() {
  for (std::vector<double>* values : {&occupancy, &first, &second}) {
    for (double& v : *values) v = static_cast<float>(v);
  }
}

}  // namespace gmmscore
