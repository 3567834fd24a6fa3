#include "feat/online_front_end.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "feat/feature_transform.h"
#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<OnlineFrontEnd>> OnlineFrontEnd::Create(const FrontEndOptions& opts,
                                                                       uint64_t seed) {
  GMM_RETURN_IF_ERROR(opts.Validate());
  if (opts.cmvn != CmvnMode::kNone && opts.cmvn != CmvnMode::kOnline) {
    return absl::InvalidArgumentError(
        "a stream's front end takes --cmvn=none or --cmvn=online: utterance and speaker CMVN "
        "need the whole input");
  }
  if (opts.transform &&
      ClassifyTransform(*opts.transform, opts.untransformed_dim()) == TransformShape::kBad) {
    return absl::InvalidArgumentError(
        absl::StrCat("the feature transform is ", opts.transform->rows, "x", opts.transform->cols,
                     ": it takes neither ", opts.untransformed_dim(), " nor ",
                     opts.untransformed_dim() + 1, " columns"));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MfccComputer> mfcc, MfccComputer::Create(opts.mfcc));
  return std::unique_ptr<OnlineFrontEnd>(new OnlineFrontEnd(opts, std::move(mfcc), seed));
}

OnlineFrontEnd::OnlineFrontEnd(const FrontEndOptions& opts, std::unique_ptr<MfccComputer> mfcc,
                               uint64_t seed)
    : opts_(opts),
      mfcc_(std::move(mfcc)),
      deltas_(opts.deltas),
      noise_(seed),
      transform_shape_(opts.transform ? ClassifyTransform(*opts.transform, opts.untransformed_dim())
                                      : TransformShape::kBad) {
  if (opts.cmvn == CmvnMode::kOnline) {
    cmvn_ = std::make_unique<SlidingCmvn>(opts.mfcc.num_ceps, opts.cmn_window, opts.norm_vars);
  }
}

void OnlineFrontEnd::AcceptWaveform(std::span<const float> samples) {
  if (finished_) return;
  wave_.insert(wave_.end(), samples.begin(), samples.end());
  num_samples_ += static_cast<int64_t>(samples.size());
  ComputeReadyBaseFrames();
}

void OnlineFrontEnd::InputFinished() {
  if (finished_) return;
  finished_ = true;
  ComputeReadyBaseFrames();
}

void OnlineFrontEnd::ComputeReadyBaseFrames() {
  const FrameOptions& frame = opts_.mfcc.frame;
  const int32_t dim = opts_.mfcc.num_ceps;
  // Before the input ends, a frame is ready when its window lies inside the samples received;
  // at the end, the frames whose windows reach past it (reflected) are ready too.
  const int64_t total = finished_ ? NumFrames(num_samples_, frame) : -1;
  while (true) {
    const int64_t f = base_frames_;
    if (finished_ ? f >= total : FirstSampleOfFrame(f, frame) + frame.WindowSize() > num_samples_) {
      break;
    }
    base_.resize(static_cast<size_t>(f + 1 - base_offset_) * dim);
    float* row = base_.data() + static_cast<size_t>(f - base_offset_) * dim;
    mfcc_->ComputeFrame(wave_, wave_offset_, num_samples_, f, &noise_, row);
    if (cmvn_) cmvn_->Process(row);
    ++base_frames_;
  }
  // Samples before the next frame's window (and never before 0, which early frames reflect
  // about) are no longer needed.
  const int64_t keep_from = std::max<int64_t>(0, FirstSampleOfFrame(base_frames_, frame));
  if (keep_from > wave_offset_) {
    const int64_t drop = std::min<int64_t>(keep_from, num_samples_) - wave_offset_;
    wave_.erase(wave_.begin(), wave_.begin() + drop);
    wave_offset_ += drop;
  }
}

int64_t OnlineFrontEnd::TakeFrames(std::vector<float>* frames) {
  const int32_t base_dim = opts_.mfcc.num_ceps, untransformed_dim = opts_.untransformed_dim();
  const int64_t lookahead = lookahead_frames();
  // Frame t is final when frame t + lookahead exists, or at the end (the clamp then uses the
  // last frame, as add-deltas and splice-feats do).
  const int64_t last = finished_ ? base_frames_ : base_frames_ - lookahead;
  const int64_t count = std::max<int64_t>(0, last - frames_out_);
  auto base_row = [&](int64_t r) {
    return base_.data() + static_cast<size_t>(r - base_offset_) * base_dim;
  };
  // The frames before the transform: deltas, spliced frames or the base frames.
  Matrix untransformed(static_cast<int32_t>(count), untransformed_dim);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t t = frames_out_ + i;
    float* out = untransformed.row(static_cast<int32_t>(i));
    if (opts_.spliced()) {
      for (int64_t k = -opts_.splice_left; k <= opts_.splice_right; ++k) {
        const int64_t r = std::clamp<int64_t>(t + k, 0, base_frames_ - 1);
        std::copy_n(base_row(r), base_dim, out + (k + opts_.splice_left) * base_dim);
      }
    } else {
      deltas_.ComputeFrame(base_row, base_dim, base_frames_, t, out);
    }
  }
  if (opts_.transform && count > 0) {
    untransformed = ApplyClassifiedTransform(*opts_.transform, transform_shape_, untransformed);
  }
  frames->insert(frames->end(), untransformed.data.begin(), untransformed.data.end());
  const int64_t taken = count;
  frames_out_ += taken;
  // Later frames look back as far as the deltas' window or the splice's left context.
  const int64_t history = opts_.spliced() ? opts_.splice_left : lookahead;
  const int64_t keep_from = std::max<int64_t>(0, frames_out_ - history);
  if (keep_from > base_offset_) {
    base_.erase(base_.begin(),
                base_.begin() + static_cast<size_t>(keep_from - base_offset_) * base_dim);
    base_offset_ = keep_from;
  }
  return taken;
}

}  // namespace gmmscore
