// The front end for one stream of audio: samples arrive in chunks of any length and feature
// frames come out as soon as they are final: MFCC (feat/mfcc.h), then, when configured,
// OnlineCmvn's causal sliding window (feat/cmvn.h), deltas (feat/deltas.h) or spliced frames
// (feat/splice.h), and a feature transform (feat/feature_transform.h: an LDA+MLLT matrix). Frame
// t leaves once the samples of frame t + lookahead_frames() are in (the deltas' or the splice's
// look-ahead), or when the input is finished. Fed a whole utterance, it gives what the offline
// computation gives, bit for bit.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "feat/cmvn.h"
#include "feat/feature_transform.h"
#include "feat/front_end_options.h"

namespace gmmscore {

class OnlineFrontEnd {
 public:
  // opts.cmvn must be none or online: the per-utterance and per-speaker modes need the whole
  // input. seed seeds the dither.
  static absl::StatusOr<std::unique_ptr<OnlineFrontEnd>> Create(const FrontEndOptions& opts,
                                                                uint64_t seed);
  int32_t dim() const { return opts_.dim(); }
  // Frames of delay the deltas or the splice add before a frame is final.
  int32_t lookahead_frames() const { return opts_.lookahead(); }

  void AcceptWaveform(std::span<const float> samples);
  void InputFinished();
  // Appends every frame that is final and not yet taken to *frames (dim() values each); returns
  // how many.
  int64_t TakeFrames(std::vector<float>* frames);

  int64_t samples_received() const { return num_samples_; }

 private:
  OnlineFrontEnd(const FrontEndOptions& opts, std::unique_ptr<MfccComputer> mfcc, uint64_t seed);
  // Computes the MFCC (and CMVN) frames whose samples are all in.
  void ComputeReadyBaseFrames();

  FrontEndOptions opts_;
  std::unique_ptr<MfccComputer> mfcc_;
  std::unique_ptr<SlidingCmvn> cmvn_;
  DeltaComputer deltas_;
  GaussianNoise noise_;
  TransformShape transform_shape_;  // of opts_.transform, checked by Create
  bool finished_ = false;
  std::vector<float> wave_;  // samples wave_offset_ .. num_samples_ - 1
  int64_t wave_offset_ = 0;
  int64_t num_samples_ = 0;
  std::vector<float> base_;  // MFCC (+CMVN) frames base_offset_ .. base_frames_ - 1
  int64_t base_offset_ = 0;
  int64_t base_frames_ = 0;
  int64_t frames_out_ = 0;  // frames taken so far
};

}  // namespace gmmscore
