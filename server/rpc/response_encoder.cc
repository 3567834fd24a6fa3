#include "server/rpc/response_encoder.h"

#include <algorithm>
#include <bit>

#include "proto/wire_codec.h"

namespace gmmscore::server {
namespace {

// The first index of the largest value, as std::max_element finds it, but with the maximum
// taken in eight independent lanes first, which the compiler turns into vector instructions
// (a daemon finds a best state for every frame it sends).
int32_t BestIndex(const float* row, int32_t n) {
  constexpr int32_t kLanes = 8;
  if (n < kLanes) return int32_t(std::max_element(row, row + n) - row);
  float lanes[kLanes];
  std::copy_n(row, kLanes, lanes);
  int32_t i = kLanes;
  for (; i + kLanes <= n; i += kLanes) {
    for (int32_t j = 0; j < kLanes; ++j) lanes[j] = lanes[j] < row[i + j] ? row[i + j] : lanes[j];
  }
  float best = *std::max_element(lanes, lanes + kLanes);
  for (; i < n; ++i) best = best < row[i] ? row[i] : best;
  const float* at = std::find(row, row + n, best);
  // A NaN the lanes kept equals nothing: then as std::max_element decides.
  return int32_t((at == row + n ? std::max_element(row, row + n) : at) - row);
}

// A sort key for one beam entry: ascending keys put higher scores first and equal scores in
// state order. The score's bits are made to order as unsigned integers (negative values
// reversed); adding +0 first makes -0 and +0 one key, since they compare equal as floats.
uint64_t BeamKey(float score, int32_t column) {
  uint32_t bits = std::bit_cast<uint32_t>(score + 0.0f);
  bits = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
  return uint64_t(~bits) << 32 | uint32_t(column);
}

}  // namespace

int64_t ResponseEncoder::MaxBytes(int32_t frames, int32_t num_states) const {
  int64_t columns =
      options_.state_subset.empty() ? num_states : int64_t(options_.state_subset.size());
  if (options_.encoding == v1::StreamConfig::BEAM_SPARSE && options_.max_states > 0) {
    columns = std::min<int64_t>(columns, options_.max_states);
  }
  const int64_t per_value = options_.encoding == v1::StreamConfig::FLOAT16 ||
                                    options_.encoding == v1::StreamConfig::RELATIVE16
                                ? 2
                            : options_.encoding == v1::StreamConfig::BEAM_SPARSE ? 8
                                                                                 : 4;
  return int64_t(frames) * (columns * per_value + 16);  // + best state, score and count
}

DeviceScoreEncoding ResponseEncoder::device_encoding() const {
  if (!options_.state_subset.empty()) return DeviceScoreEncoding::kNone;
  switch (options_.encoding) {
    case v1::StreamConfig::FLOAT16:
      return DeviceScoreEncoding::kFloat16;
    case v1::StreamConfig::RELATIVE16:
      return DeviceScoreEncoding::kRelative16;
    case v1::StreamConfig::BEAM_SPARSE:
      return DeviceScoreEncoding::kBeamSparse;
    default:
      return DeviceScoreEncoding::kNone;
  }
}

void ResponseEncoder::EncodeEncoded(std::span<const int32_t> best_states,
                                    std::span<const float> best_scores, int32_t states,
                                    v1::ScoreResponse* out) {
  out->set_num_frames(int32_t(best_states.size()));
  out->set_num_states(states);
  out->set_encoding(options_.encoding);
  out->mutable_best_state()->Add(best_states.begin(), best_states.end());
  out->mutable_best_score()->Add(best_scores.begin(), best_scores.end());
}

void ResponseEncoder::EncodeBeamCandidates(std::span<const int32_t> counts,
                                           std::span<const float> scores,
                                           std::span<const int32_t> states,
                                           std::span<const int32_t> best_states,
                                           std::span<const float> best_scores, int32_t num_states,
                                           v1::ScoreResponse* out) {
  out->set_num_frames(int32_t(counts.size()));
  out->set_num_states(num_states);
  out->set_encoding(options_.encoding);
  out->mutable_best_state()->Add(best_states.begin(), best_states.end());
  out->mutable_best_score()->Add(best_scores.begin(), best_scores.end());
  out->mutable_scores()->clear();
  size_t first = 0;
  for (const int32_t count : counts) {
    const size_t n = size_t(count);
    if (keys_.size() < n) keys_.resize(n);
    for (size_t p = 0; p < n; ++p) keys_[p] = BeamKey(scores[first + p], int32_t(p));
    AppendKept(n, scores.data() + first, states.data() + first, out);
    first += n;
  }
}

void ResponseEncoder::Encode(MatrixView scores, v1::ScoreResponse* out) {
  const std::vector<int32_t>& subset = options_.state_subset;
  const int32_t columns = subset.empty() ? scores.cols : int32_t(subset.size());
  out->set_num_frames(scores.rows);
  out->set_num_states(columns);
  out->set_encoding(options_.encoding);
  std::string* bytes = out->mutable_scores();
  bytes->clear();
  if (options_.encoding != v1::StreamConfig::BEAM_SPARSE) {
    bytes->reserve(size_t(scores.rows) * size_t(columns) *
                   (options_.encoding == v1::StreamConfig::FLOAT32 ? 4 : 2));
  }
  row_.resize(size_t(columns));
  for (int32_t t = 0; t < scores.rows; ++t) {
    const float* all = scores.row(t);
    const float* row = all;
    if (!subset.empty()) {
      for (int32_t i = 0; i < columns; ++i) row_[i] = all[subset[i]];
      row = row_.data();
    }
    const int32_t best = BestIndex(row, columns);
    const auto state_id = [&](int32_t column) { return subset.empty() ? column : subset[column]; };
    out->add_best_state(state_id(best));
    out->add_best_score(row[best]);
    switch (options_.encoding) {
      case v1::StreamConfig::FLOAT16:
        wire::AppendFloat16({row, size_t(columns)}, bytes);
        break;
      case v1::StreamConfig::RELATIVE16:
        wire::AppendRelative16({row, size_t(columns)}, row[best], bytes);
        break;
      case v1::StreamConfig::BEAM_SPARSE:
        AppendBeam(row, columns, best, out);
        break;
      default:
        wire::AppendFloat32({row, size_t(columns)}, bytes);
        break;
    }
  }
}

void ResponseEncoder::AppendBeam(const float* row, int32_t columns, int32_t best,
                                 v1::ScoreResponse* out) {
  // The states within the beam (a NaN is never within), as sort keys. A branch per state is
  // cheaper here than a branch-free or bit-mask loop: most states are outside the beam.
  const float threshold = row[best] - options_.beam;
  // keys_ only grows: resizing it down and up each frame would zero it each frame.
  if (keys_.size() < size_t(columns)) keys_.resize(size_t(columns));
  size_t n = 0;
  for (int32_t c = 0; c < columns; ++c) {
    if (__builtin_expect(row[c] >= threshold, 0)) keys_[n++] = BeamKey(row[c], c);
  }
  AppendKept(n, row, options_.state_subset.empty() ? nullptr : options_.state_subset.data(), out);
}

void ResponseEncoder::AppendKept(size_t n, const float* scores, const int32_t* ids,
                                 v1::ScoreResponse* out) {
  const auto first = keys_.begin(), last = keys_.begin() + ptrdiff_t(n);
  // Best first, equal scores by state order; past max_states only the first max_states.
  size_t keep = n;
  if (options_.max_states > 0 && keep > size_t(options_.max_states)) {
    keep = size_t(options_.max_states);
    std::nth_element(first, first + ptrdiff_t(keep), last);
  }
  std::sort(first, first + ptrdiff_t(keep));
  values_.resize(keep);
  ids_.resize(keep);
  for (size_t k = 0; k < keep; ++k) {
    const auto p = int32_t(keys_[k] & 0xffffffffu);
    values_[k] = scores[p];
    ids_[k] = ids == nullptr ? p : ids[p];
  }
  wire::AppendFloat32(values_, out->mutable_scores());
  wire::AppendInt32(ids_, out->mutable_sparse_states());
  out->add_sparse_counts(uint32_t(keep));
}

}  // namespace gmmscore::server
