// Turns a window's fused scores (frames x all states) into a ScoreResponse in the stream's
// encoding: FLOAT32 or FLOAT16 rows of the chosen states, or BEAM_SPARSE (per frame the states
// within the beam of its best, best first, at most max_states), plus each frame's best state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gmmscore/v1/scorer.pb.h"
#include "kernels/compute_device.h"
#include "util/matrix.h"

namespace gmmscore::server {

struct EncoderOptions {
  v1::StreamConfig::Encoding encoding = v1::StreamConfig::FLOAT32;
  float beam = 0.0f;
  int32_t max_states = 0;             // BEAM_SPARSE; 0: no limit
  std::vector<int32_t> state_subset;  // empty: all states in model order
};

class ResponseEncoder {
 public:
  explicit ResponseEncoder(EncoderOptions options) : options_(std::move(options)) {}

  // Fills scores, sparse fields, best_state/best_score, num_frames and num_states of out.
  void Encode(MatrixView scores, v1::ScoreResponse* out);
  // The encoding a device may make of this stream's rows where it scores: FLOAT16 or RELATIVE16
  // of every state (BatchSlot::encoded16), BEAM_SPARSE's candidates among every state
  // (BatchSlot::beam_candidates, with beam()); kNone for FLOAT32 and state subsets.
  DeviceScoreEncoding device_encoding() const;
  float beam() const { return options_.beam; }
  // As Encode, for rows the device encoded in device_encoding() (little-endian 16-bit values,
  // best_states.size() frames x states), with each frame's best state and score: all but the
  // scores, which are those values as they are (SerializeResponse sends them without a copy).
  void EncodeEncoded(std::span<const int32_t> best_states, std::span<const float> best_scores,
                     int32_t states, v1::ScoreResponse* out);
  // As Encode, from the BEAM_SPARSE candidates a device selected: per frame counts[t] of them in
  // scores and states (model state ids, in state order), frame after frame, with each frame's best
  // state and score; the same response Encode makes of the frames' rows.
  void EncodeBeamCandidates(std::span<const int32_t> counts, std::span<const float> scores,
                            std::span<const int32_t> states, std::span<const int32_t> best_states,
                            std::span<const float> best_scores, int32_t num_states,
                            v1::ScoreResponse* out);
  // Bytes of a response for `frames` frames of `num_states` model states (memory accounting).
  int64_t MaxBytes(int32_t frames, int32_t num_states) const;

 private:
  // BEAM_SPARSE: one frame's states within the beam of its best (column `best` of row), best
  // first, at most max_states, appended to out's scores and sparse_states.
  void AppendBeam(const float* row, int32_t columns, int32_t best, v1::ScoreResponse* out);
  // BEAM_SPARSE: of one frame's n entries within the beam, keys_[0, n) (their scores' BeamKeys
  // with their places p in scores, which are in state order), the best max_states, best first:
  // scores[p] and state id ids[p] (ids null: p) appended to out.
  void AppendKept(size_t n, const float* scores, const int32_t* ids, v1::ScoreResponse* out);

  const EncoderOptions options_;
  std::vector<float> row_;  // one frame's chosen scores
  // BEAM_SPARSE scratch: the sort keys of the states within the beam, the kept entries.
  std::vector<uint64_t> keys_;
  std::vector<float> values_;
  std::vector<int32_t> ids_;
};

}  // namespace gmmscore::server
