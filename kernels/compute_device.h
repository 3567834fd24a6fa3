// The interface the daemon's lanes run jobs through, one implementation per backend
// (kernels/cpu/cpu_compute_device.h, kernels/cuda/cuda_compute_device.h), in the manner of ggml's
// backends: a device makes models resident, and runs batches on its slots.
//
//   ResidentModel  a model as one backend holds it (the CPU's packed layout; a GPU's layouts and
//                  kernel choices). Made by a device, used by that device and by the devices that
//                  share its residency index; opaque to everyone else.
//   BatchSlot      one batch in flight: its buffers and, where the device is asynchronous, its
//                  stream. Staged, enqueued, waited for, read, in that order.
//   ComputeDevice  the CPU or one GPU: its slots and the models resident on it.
//
// Scoring is the one operation today; alignment and statistics jobs are further operations of the
// slot, against the same resident models, so that they never copy scores to the host and back.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "kernels/batch_viterbi.h"
#include "model/fusion.h"
#include "model/gmm_model.h"

namespace gmmscore {

class ResidentModel {
 public:
  virtual ~ResidentModel() = default;
  // The backend that made it ("cpu", "cuda"): a device refuses models of another backend.
  virtual std::string_view backend() const = 0;
  virtual int32_t num_states() const = 0;
  virtual int32_t dim() const = 0;
  // Memory it holds where it is resident (parameters, nothing per batch).
  virtual int64_t bytes() const = 0;
};

// What a device may make of fused rows where it scores, so that the host sends them without
// reading the float scores: scorer.proto's 16-bit encodings (BatchSlot::encoded16), or
// BEAM_SPARSE's candidates (BatchSlot::beam_candidates).
enum class DeviceScoreEncoding : uint8_t {
  kNone = 0,
  kFloat16 = 1,
  kRelative16 = 2,
  kBeamSparse = 3
};

// Per frame the states within the beam of the frame's best (score >= best - beam, in float), in
// state order, at most `capacity` a frame: frame t's at [t * capacity, t * capacity + counts[t]).
// counts[t] is -1 where there were more, or the row holds a NaN: its float row is then to be used.
struct BeamCandidates {
  const int32_t* counts = nullptr;  // null: none selected
  const float* scores = nullptr;
  const int32_t* states = nullptr;
  int32_t capacity = 0;
};

// A run of consecutive frames of a batch fused by one rule (a window of one stream, say).
struct FusionSegment {
  int32_t frames = 0;
  // Max, log-linear or log-add; or select, which must then be the batch's only segment and
  // continues the slot's running sums. nullptr: the frames are not fused; the caller reads each
  // model's scores (copy_model_scores).
  const FusionSpec* fusion = nullptr;
  // Where the device encodes (BatchSlot::encoded16), the fused rows also in this encoding. Only
  // for segments the device fuses (or of a set of one model).
  DeviceScoreEncoding encoding = DeviceScoreEncoding::kNone;
  float beam = 0.0f;  // kBeamSparse: > 0
};

class BatchSlot {
 public:
  virtual ~BatchSlot() = default;
  // Makes room for a batch of `frames` frames against models (same states and dimension, resident
  // on this device; a set of several models may grow the slot's buffers at its first batch) and
  // returns where the caller puts the batch's features: frames rows of dim floats, valid until
  // the batch is enqueued.
  virtual absl::StatusOr<float*> Stage(std::span<const ResidentModel* const> models,
                                       int32_t frames) = 0;
  // Scores the `frames` staged frames against the models given to Stage, fuses each segment where
  // the device fuses, and makes every model's scores readable when copy_model_scores or the device
  // does not fuse. On a failure nothing is left in flight.
  virtual absl::Status EnqueueScores(std::span<const ResidentModel* const> models,
                                     std::span<const FusionSegment> segments, int32_t frames,
                                     bool copy_model_scores) = 0;
  // Waits for the batch; a fault in its kernels surfaces here.
  virtual absl::Status Wait() = 0;
  // After Wait, frames x states rows: the fused scores of the segments that had a rule (rows of
  // the others unspecified), or null where the device leaves fusion to the caller; and model k's
  // scores. Where every segment of a batch asked for an encoding the device may leave the fused
  // rows where it made them: FetchFusedRows makes some readable here.
  virtual const float* fused() const = 0;
  // After Wait: rows [first, first + rows) of fused() readable (a copy from the device where it
  // left them there; nothing where they are already here). May be called from several threads.
  virtual absl::Status FetchFusedRows(int32_t /*first*/, int32_t /*rows*/) {
    return absl::OkStatus();
  }
  virtual const float* model_scores(int32_t k) const = 0;
  // After Wait, where the device encodes (null where it does not, or no segment asked): frames x
  // states 16-bit values, the rows of segments with a 16-bit encoding in it (others unspecified),
  // and for the frames of segments with any encoding the best state (the first of the largest fused
  // score; -1 where the row holds a NaN and its 16-bit row is not to be used) and its score. The
  // values are what proto/wire_codec.h makes of the fused rows, bit for bit.
  virtual const uint16_t* encoded16() const { return nullptr; }
  // After Wait, where encoded16() is not null: the buffer that holds it, for the caller to keep
  // while it reads the rows (responses that send them as they are), the slot going on with
  // another. Null where the slot has none to spare: the caller copies the rows out.
  virtual std::shared_ptr<const uint16_t> LendEncoded16() { return nullptr; }
  virtual const int32_t* best_states() const { return nullptr; }
  virtual const float* best_scores() const { return nullptr; }
  // After Wait, where the device selects (counts null where it does not, or no segment asked for
  // kBeamSparse): the candidates of the frames of kBeamSparse segments (others unspecified). Their
  // best states and scores are best_states() and best_scores().
  virtual BeamCandidates beam_candidates() const { return {}; }
};

class ComputeDevice {
 public:
  virtual ~ComputeDevice() = default;
  virtual const std::string& name() const = 0;  // "cpu", "cuda:0"
  // Devices of one index share resident models: a model made resident by one of them serves all.
  virtual int32_t residency_index() const = 0;
  virtual int32_t num_slots() const = 0;
  virtual BatchSlot& slot(int32_t i) = 0;
  // The model resident on this device. Fails, naming the device and the bytes needed and free,
  // when it does not fit.
  virtual absl::StatusOr<std::unique_ptr<ResidentModel>> MakeResident(const GmmModel& model) = 0;
  // Makes slot i ready for batches of `model` (its buffers grown; on a GPU its kernel choices
  // made, so that no batch waits for them). Not while slot i has a batch in flight.
  virtual absl::Status Prepare(int32_t i, const ResidentModel& model) = 0;
  // Memory the slots' buffers hold on the device.
  virtual int64_t buffer_bytes() const = 0;
  // A Viterbi for batches of utterances on this device (kernels/batch_viterbi.h), or null where
  // alignments are the CPU aligner's.
  virtual absl::StatusOr<std::unique_ptr<BatchViterbi>> MakeViterbi() {
    return std::unique_ptr<BatchViterbi>();
  }
};

}  // namespace gmmscore
