#include "server/rpc/stream_session.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "feat/compute_features.h"
#include "server/rpc/response_buffer.h"

namespace gmmscore::server {
namespace {

std::atomic<uint64_t> next_session_id{1};

Clock::duration ToClock(absl::Duration d) {
  return std::chrono::duration_cast<Clock::duration>(absl::ToChronoNanoseconds(d));
}

FailureReason ReasonFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kNotFound:
      return FailureReason::kUnknownModel;
    case absl::StatusCode::kUnavailable:
      return FailureReason::kModelLoading;
    case absl::StatusCode::kFailedPrecondition:
      return FailureReason::kProtocol;
    case absl::StatusCode::kInvalidArgument:
      return FailureReason::kInvalidArgument;
    default:
      return FailureReason::kInternal;
  }
}

}  // namespace

SessionTracker::AddResult SessionTracker::TryAdd(uint64_t id,
                                                 std::weak_ptr<StreamSession> session) {
  std::lock_guard lock(mu_);
  if (draining_) return AddResult::kDraining;
  if (int32_t(sessions_.size()) >= max_streams_) return AddResult::kFull;
  sessions_.emplace(id, std::move(session));
  return AddResult::kAdded;
}

void SessionTracker::Remove(uint64_t id) {
  std::lock_guard lock(mu_);
  sessions_.erase(id);
  if (sessions_.empty()) empty_.notify_all();
}

std::vector<std::shared_ptr<StreamSession>> SessionTracker::BeginDrain() {
  std::lock_guard lock(mu_);
  draining_ = true;
  std::vector<std::shared_ptr<StreamSession>> open;
  for (const auto& [id, weak] : sessions_) {
    if (auto s = weak.lock()) open.push_back(std::move(s));
  }
  return open;
}

bool SessionTracker::WaitUntilEmpty(Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return empty_.wait_until(lock, deadline, [this] { return sessions_.empty(); });
}

bool SessionTracker::draining() {
  std::lock_guard lock(mu_);
  return draining_;
}

int32_t SessionTracker::size() {
  std::lock_guard lock(mu_);
  return int32_t(sessions_.size());
}

void StreamSession::Start(std::unique_ptr<BidiCall> call, std::function<void()> on_done,
                          const SessionServices& services) {
  BidiCall* c = call.get();
  auto session = std::make_shared<StreamSession>(std::move(call), services, next_session_id++);
  session->self_ = session;
  c->Bind(session.get(), std::move(on_done));
  std::unique_lock lock(session->mu_);
  switch (services.tracker->TryAdd(session->id_, session)) {
    case SessionTracker::AddResult::kAdded:
      session->has_slot_ = true;
      services.metrics->active_streams.Increment();
      break;
    case SessionTracker::AddResult::kFull:
      session->Fail(absl::StatusCode::kResourceExhausted, FailureReason::kTooManyStreams,
                    absl::StrCat("the server has its limit of open streams (--max-streams)"));
      break;
    case SessionTracker::AddResult::kDraining:
      session->Fail(absl::StatusCode::kUnavailable, FailureReason::kDraining,
                    "the server is draining and takes no new streams");
      break;
  }
  StreamSession* reactor = session.get();
  reactor->Pump(std::move(lock));
}

StreamSession::StreamSession(std::unique_ptr<BidiCall> call, const SessionServices& services,
                             uint64_t id)
    : services_(services), limits_(*services.limits), call_(std::move(call)), id_(id) {}

StreamSession::~StreamSession() {
  // Frames and windows still counted (a stream that failed with windows in the batcher).
  if (buffered_bytes_ != 0) services_.metrics->buffered_bytes.Decrement(double(buffered_bytes_));
}

std::string StreamSession::Label() const {
  if (setup_.has_value() && !setup_->stream_id.empty()) {
    return absl::StrCat("stream '", setup_->stream_id, "'");
  }
  return absl::StrCat("stream #", id_);
}

void StreamSession::AddBuffered(int64_t bytes) {
  buffered_bytes_ += bytes;
  services_.metrics->buffered_bytes.Increment(double(bytes));
}

template <typename Reaction>
void StreamSession::Guarded(Reaction&& reaction) noexcept {
  absl::StatusCode code = absl::StatusCode::kInternal;
  std::string what;
  try {
    reaction();
    return;
  } catch (const std::bad_alloc&) {
    code = absl::StatusCode::kResourceExhausted;
    what = "out of memory";
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an unknown exception";
  }
  // The reaction's lock was released as the exception left it; the stream still ends (and frees
  // its slot in OnDone) with the error.
  try {
    std::unique_lock lock(mu_);
    Fail(code, FailureReason::kInternal, absl::StrCat("the server failed: ", what));
    Pump(std::move(lock));
  } catch (...) {
    call_->TryCancel();
  }
}

void StreamSession::Fail(absl::StatusCode code, FailureReason reason, const std::string& message) {
  if (!error_.ok() || finish_called_) return;  // the first error wins
  error_ = absl::Status(code, absl::StrCat(Label(), ": ", message));
  services_.metrics->CountFailure(reason);
  // Nothing more is scored or sent: drop what is buffered (windows in the batcher come back and
  // are dropped there).
  if (cutter_) {
    AddBuffered(-cutter_->pending_bytes());
    cutter_->Clear();
  }
  for (const Outgoing& o : outbound_) AddBuffered(-o.bytes);
  windows_out_ -= int32_t(outbound_.size() + in_order_.waiting());
  outbound_.clear();
  in_order_.Clear();
}

void StreamSession::Pump(std::unique_lock<std::mutex> lock) {
  while (true) {
    const Actions a = Decide(Clock::now());
    lock.unlock();
    if (!a.any()) return;
    if (a.timer) {
      services_.timers->Schedule(*a.timer, [weak = weak_from_this()] {
        if (auto session = weak.lock()) session->OnTimer();
      });
    }
    if (a.cancel) call_->TryCancel();
    if (a.read) call_->StartRead(&read_buffer_);
    if (a.write) call_->StartWrite(&write_buffer_);
    if (a.finish) {
      call_->Finish(*a.finish);
      return;
    }
    lock.lock();
    starting_ -= a.starts();
  }
}

StreamSession::Actions StreamSession::Decide(Clock::time_point now) {
  Actions a;
  if (finish_called_) return a;
  // The client waits on the server, not the other way round, while a window is being scored, or
  // one waits to be written with no write in flight (a write starts below).
  const int32_t scoring = windows_out_ - int32_t(outbound_.size()) - (write_in_flight_ ? 1 : 0);
  const bool owing = scoring > 0 || (!write_in_flight_ && !outbound_.empty());
  const Clock::duration idle = ToClock(limits_.idle_timeout);
  if (error_.ok() && !draining_) {
    const Clock::duration longest = ToClock(limits_.max_stream_duration);
    if (idle > Clock::duration::zero() && !owing && now - last_activity_ >= idle) {
      Fail(absl::StatusCode::kDeadlineExceeded, FailureReason::kIdleTimeout,
           absl::StrCat("nothing read or written for ", absl::FormatDuration(limits_.idle_timeout),
                        " (--idle-timeout)"));
    } else if (longest > Clock::duration::zero() && now - started_ >= longest) {
      Fail(absl::StatusCode::kDeadlineExceeded, FailureReason::kMaxDuration,
           absl::StrCat("open longer than ", absl::FormatDuration(limits_.max_stream_duration),
                        " (--max-stream-duration)"));
    }
  }
  if (!error_.ok()) {
    if (!write_in_flight_ && starting_ == 0) {
      finish_called_ = true;
      a.finish =
          grpc::Status(static_cast<grpc::StatusCode>(error_.code()), std::string(error_.message()));
    } else if (write_in_flight_) {
      // The status waits for the write in flight, which a reading client completes soon; one the
      // client does not drain would hold it back for good, so a write in flight longer than the
      // idle timeout (a second when there is none) is cancelled.
      const Clock::time_point stuck =
          writing_.handed + (idle > Clock::duration::zero() ? idle : std::chrono::seconds(1));
      if (now >= stuck) {
        a.cancel = true;
      } else if (stuck < timer_at_) {
        timer_at_ = stuck;
        a.timer = stuck;
      }
    }
    return a;
  }

  const bool input_closed = phase_ == Phase::kEnded || half_closed_ || draining_;
  const int32_t window = setup_ ? setup_->window_frames : 0;
  while (PendingFrames() > 0 && windows_out_ < limits_.max_stream_windows) {
    const bool due = input_closed || now >= cutter_->oldest_arrival() + setup_->max_latency;
    if (PendingFrames() < window && !due) break;
    CutWindow(std::min(window, PendingFrames()));
  }
  // After End the stream is still read: the client's half-close is expected, anything else is
  // a protocol error.
  const bool want_input = phase_ == Phase::kEnded || (PendingFrames() < std::max(window, 1) &&
                                                      windows_out_ < limits_.max_stream_windows);
  if (!read_in_flight_ && !half_closed_ && !draining_ && want_input) {
    read_in_flight_ = true;
    a.read = true;
  }
  if (!write_in_flight_ && !outbound_.empty()) {
    writing_ = std::move(outbound_.front());
    outbound_.pop_front();
    write_in_flight_ = true;
    a.write = true;
    writing_.handed = now;
    last_activity_ = now;
    write_buffer_ = SerializeResponse(&writing_.response, std::move(writing_.scores));
    services_.metrics->before_write_seconds.Observe(
        std::chrono::duration<double>(now - writing_.ready).count());
  }
  starting_ += a.starts();
  if ((half_closed_ || draining_) && PendingFrames() == 0 && windows_out_ == 0 && starting_ == 0) {
    finish_called_ = true;
    if (draining_ && phase_ != Phase::kEnded && !half_closed_) {
      services_.metrics->CountFailure(FailureReason::kDraining);
      a.finish =
          grpc::Status(grpc::StatusCode::UNAVAILABLE,
                       absl::StrCat(Label(), ": the server is draining; frames before ",
                                    NextFrame(), " were scored and sent, send the rest from frame ",
                                    NextFrame(), " to another server"));
    } else {
      a.finish = grpc::Status::OK;
    }
    return a;
  }

  // Wake up for the partial window's deadline, the idle timeout or the maximum duration.
  Clock::time_point next = Clock::time_point::max();
  if (PendingFrames() > 0) next = cutter_->oldest_arrival() + setup_->max_latency;
  if (idle > Clock::duration::zero() && !owing) next = std::min(next, last_activity_ + idle);
  if (limits_.max_stream_duration > absl::ZeroDuration()) {
    next = std::min(next, started_ + ToClock(limits_.max_stream_duration));
  }
  if (next < timer_at_) {
    timer_at_ = next;
    a.timer = next;
  }
  return a;
}

void StreamSession::OnTimer() {
  Guarded([&] {
    std::unique_lock lock(mu_);
    if (Clock::now() >= timer_at_) timer_at_ = Clock::time_point::max();
    Pump(std::move(lock));
  });
}

void StreamSession::CutWindow(int32_t frames) {
  WindowCutter::Cut cut = cutter_->CutWindow(frames);
  Window w;
  w.sink = shared_from_this();
  w.first_frame = cut.first_frame;
  w.feats = std::move(cut.feats);
  w.ready = cut.ready;
  w.fusion = fusion_spec_;
  w.encoding = encoder_->device_encoding();
  w.beam = encoder_->beam();
  in_order_.Cut(w.first_frame);
  ++windows_out_;
  services_.batcher->Submit(setup_->models, std::move(w));
}

void StreamSession::OnReadDone(bool ok) {
  Guarded([&] {
    std::unique_lock lock(mu_);
    read_in_flight_ = false;
    const Clock::time_point now = Clock::now();
    if (!ok) {
      // The client half-closed (or the call is cancelled, which OnCancel reports).
      half_closed_ = true;
      if (phase_ == Phase::kAwaitConfig) {
        Fail(absl::StatusCode::kFailedPrecondition, FailureReason::kProtocol,
             "the stream closed before its StreamConfig");
      }
    } else if (!finish_called_ && error_.ok()) {
      last_activity_ = now;
      ++messages_read_;
      const grpc::Status parsed =
          grpc::SerializationTraits<v1::ScoreRequest>::Deserialize(&read_buffer_, &request_);
      if (parsed.ok()) {
        HandleRequest(now);
      } else {
        Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
             absl::StrCat("message ", messages_read_, " of the stream is not a ScoreRequest (",
                          parsed.error_message(), ")"));
      }
    }
    Pump(std::move(lock));
  });
}

void StreamSession::HandleRequest(Clock::time_point now) {
  switch (request_.request_case()) {
    case v1::ScoreRequest::kConfig: {
      if (phase_ != Phase::kAwaitConfig) {
        Fail(absl::StatusCode::kFailedPrecondition, FailureReason::kProtocol,
             "a second StreamConfig; only the first message may be one");
        return;
      }
      absl::StatusOr<StreamSetup> setup = ResolveStreamConfig(
          request_.config(), *services_.registry, *services_.front_ends, limits_);
      if (!setup.ok()) {
        if (request_.config().stream_id().size() <= kMaxStreamIdBytes) {
          setup_.emplace();
          setup_->stream_id = request_.config().stream_id();  // for the error's label
        }
        Fail(setup.status().code(), ReasonFor(setup.status().code()),
             std::string(setup.status().message()));
        return;
      }
      setup_ = *std::move(setup);
      cutter_.emplace(setup_->dim);
      fusion_.emplace(setup_->fusion, setup_->models->models.size());
      fusion_spec_ = std::make_shared<const FusionSpec>(setup_->fusion);
      if (setup_->front_end) {
        auto front_end = OnlineFrontEnd::Create(
            *setup_->front_end, DitherSeed(setup_->front_end->dither_seed, setup_->stream_id));
        if (!front_end.ok()) {
          Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
               std::string(front_end.status().message()));
          return;
        }
        front_end_ = std::move(*front_end);
      }
      if (const int32_t keep = request_.config().keep_frames(); keep != 0) {
        if (setup_->stream_id.empty()) {
          Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
               "keep_frames needs a stream_id to keep the frames under");
          return;
        }
        auto writer = services_.kept_frames->Open(setup_->stream_id, setup_->dim, keep, now);
        if (!writer.ok()) {
          Fail(writer.status().code(), ReasonFor(writer.status().code()),
               std::string(writer.status().message()));
          return;
        }
        kept_ = *std::move(writer);
      }
      encoder_.emplace(setup_->encoder);
      for (const auto& m : setup_->models->models) {
        ++m->active_streams();
        frames_received_.push_back(&services_.metrics->frames_received(m->name()));
      }
      phase_ = Phase::kStreaming;
      return;
    }
    case v1::ScoreRequest::kFeatures:
      if (phase_ == Phase::kAwaitConfig) {
        Fail(absl::StatusCode::kFailedPrecondition, FailureReason::kProtocol,
             "the first message must be a StreamConfig, not features");
      } else if (phase_ == Phase::kEnded) {
        Fail(absl::StatusCode::kFailedPrecondition, FailureReason::kProtocol,
             absl::StrCat("features (frame ", request_.features().first_frame(), ") after End"));
      } else if (front_end_) {
        Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
             "features on an audio stream (its config has an AudioConfig)");
      } else {
        AddFeatures(request_.features(), now);
      }
      return;
    case v1::ScoreRequest::kAudio:
      if (phase_ == Phase::kAwaitConfig) {
        Fail(absl::StatusCode::kFailedPrecondition, FailureReason::kProtocol,
             "the first message must be a StreamConfig, not audio");
      } else if (phase_ == Phase::kEnded) {
        Fail(absl::StatusCode::kFailedPrecondition, FailureReason::kProtocol,
             absl::StrCat("audio (sample ", request_.audio().first_sample(), ") after End"));
      } else if (!front_end_) {
        Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
             "audio on a feature stream (its config has no AudioConfig)");
      } else {
        AddAudio(request_.audio(), now);
      }
      return;
    case v1::ScoreRequest::kEnd:
      if (phase_ != Phase::kStreaming) {
        Fail(absl::StatusCode::kFailedPrecondition, FailureReason::kProtocol,
             phase_ == Phase::kEnded ? "a second End" : "End before the StreamConfig");
        return;
      }
      if (front_end_) {  // the frames that waited for the end of the audio
        front_end_->InputFinished();
        audio_scratch_.clear();
        const int64_t frames = front_end_->TakeFrames(&audio_scratch_);
        AppendFrames({reinterpret_cast<const char*>(audio_scratch_.data()),
                      audio_scratch_.size() * sizeof(float)},
                     frames, now);
        if (!error_.ok()) return;
      }
      phase_ = Phase::kEnded;
      return;
    default:
      Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
           "an empty ScoreRequest (no config, features or end)");
      return;
  }
}

void StreamSession::AddFeatures(const v1::FeatureChunk& chunk, Clock::time_point now) {
  const int32_t dim = setup_->dim;
  const size_t frame_bytes = size_t(dim) * sizeof(float);
  const std::string& data = chunk.data();
  if (data.size() % frame_bytes != 0) {
    Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
         absl::StrCat("the chunk at frame ", chunk.first_frame(), " has ", data.size(),
                      " bytes, not a whole number of ", dim, "-dimensional float32 frames (",
                      frame_bytes, " bytes each)"));
    return;
  }
  const int64_t frames = int64_t(data.size() / frame_bytes);
  if (frames > limits_.max_frames_per_chunk) {
    Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
         absl::StrCat("the chunk at frame ", chunk.first_frame(), " has ", frames,
                      " frames, more than --max-frames-per-chunk ", limits_.max_frames_per_chunk));
    return;
  }
  if (chunk.first_frame() != cutter_->next_frame()) {
    Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
         absl::StrCat("a chunk starts at frame ", chunk.first_frame(), "; the next frame is ",
                      cutter_->next_frame()));
    return;
  }
  AppendFrames(data, frames, now);
}

void StreamSession::AppendFrames(std::string_view data, int64_t frames, Clock::time_point now) {
  if (frames == 0) return;
  if (absl::Status s = cutter_->Append(data, now); !s.ok()) {
    Fail(s.code(), FailureReason::kInvalidArgument, std::string(s.message()));
    return;
  }
  AddBuffered(frames * int64_t(setup_->dim) * int64_t(sizeof(float)));
  for (prometheus::Counter* c : frames_received_) c->Increment(double(frames));
  if (kept_) kept_->Append(data);
}

void StreamSession::AddAudio(const v1::AudioChunk& chunk, Clock::time_point now) {
  const std::string& data = chunk.samples();
  if (data.size() % 2 != 0) {
    Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
         absl::StrCat("the audio chunk at sample ", chunk.first_sample(), " has ", data.size(),
                      " bytes, not a whole number of 16-bit samples"));
    return;
  }
  const int64_t samples = int64_t(data.size() / 2);
  const int64_t max_samples =
      int64_t(limits_.max_frames_per_chunk) * setup_->front_end->mfcc.frame.WindowShift();
  if (samples > max_samples) {
    Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
         absl::StrCat("the audio chunk at sample ", chunk.first_sample(), " has ", samples,
                      " samples, more than --max-frames-per-chunk frame shifts (", max_samples,
                      ")"));
    return;
  }
  if (chunk.first_sample() != next_sample_) {
    Fail(absl::StatusCode::kInvalidArgument, FailureReason::kInvalidArgument,
         absl::StrCat("an audio chunk starts at sample ", chunk.first_sample(),
                      "; the next sample is ", next_sample_));
    return;
  }
  next_sample_ += samples;
  audio_scratch_.resize(size_t(samples));
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  for (int64_t i = 0; i < samples; ++i) {
    audio_scratch_[size_t(i)] =
        static_cast<float>(static_cast<int16_t>(uint16_t(bytes[2 * i] | bytes[2 * i + 1] << 8)));
  }
  front_end_->AcceptWaveform(audio_scratch_);
  audio_scratch_.clear();
  const int64_t frames = front_end_->TakeFrames(&audio_scratch_);
  AppendFrames(
      {reinterpret_cast<const char*>(audio_scratch_.data()), audio_scratch_.size() * sizeof(float)},
      frames, now);
}

void StreamSession::OnWindowScored(Window window, absl::StatusOr<WindowScores> scores) {
  Guarded([&] {
    std::unique_lock lock(mu_);
    AddBuffered(-int64_t(window.feats.data.size() * sizeof(float)));
    if (finish_called_ || !error_.ok()) {
      --windows_out_;
    } else if (in_order_.TakeIfNext(window.first_frame)) {
      // The usual case: out at once, from the rows as delivered.
      Emit(window.first_frame, window.ready, scores, std::move(window.encoded));
      while (error_.ok()) {
        std::optional<std::pair<int64_t, Scored>> next = in_order_.PopNext();
        if (!next) break;
        Scored& kept = next->second;
        Emit(next->first, kept.ready,
             kept.scores.ok() ? absl::StatusOr<WindowScores>(ViewScores(*kept.scores))
                              : absl::StatusOr<WindowScores>(kept.scores.status()),
             std::move(kept.encoded));
      }
    } else {
      // Batches can finish out of order: this one waits, with a copy of its rows, for an
      // earlier window of the stream.
      in_order_.Arrived(window.first_frame,
                        Scored{window.ready,
                               scores.ok() ? CopyScores(*scores)
                                           : absl::StatusOr<std::vector<Matrix>>(scores.status()),
                               std::move(window.encoded)});
    }
    Pump(std::move(lock));
  });
}

void StreamSession::Emit(int64_t first_frame, Clock::time_point ready,
                         const absl::StatusOr<WindowScores>& scores, EncodedRows encoded) {
  if (!scores.ok()) {
    --windows_out_;
    Fail(absl::StatusCode::kInternal, FailureReason::kInternal,
         absl::StrCat("scoring frames ", first_frame, "..: ", scores.status().message()));
    return;
  }
  Outgoing& out = outbound_.emplace_back();
  out.ready = ready;
  v1::ScoreResponse& r = out.response;
  r.set_stream_id(setup_->stream_id);
  r.set_first_frame(first_frame);
  for (const auto& m : setup_->models->models) {
    v1::ModelVersion* v = r.add_models();
    v->set_name(m->name());
    v->set_version(m->version());
  }
  const int32_t states = setup_->models->models.front()->num_states();
  const int32_t frames = int32_t(encoded.best_states.size());
  if (!encoded.empty()) {
    if (encoded.beam_counts.empty()) {
      // Rows the device encoded become the response's scores as they are.
      encoder_->EncodeEncoded(encoded.best_states, encoded.best_scores, states, &r);
      out.scores = std::move(encoded.values);
    } else {
      encoder_->EncodeBeamCandidates(encoded.beam_counts, encoded.beam_scores, encoded.beam_states,
                                     encoded.best_states, encoded.best_scores, states, &r);
    }
    out.bytes = encoder_->MaxBytes(frames, states);
    AddBuffered(out.bytes);
    return;
  }
  absl::StatusOr<MatrixView> fused = fusion_->Fuse(*scores, &fused_scratch_);
  if (!fused.ok()) {
    outbound_.pop_back();
    --windows_out_;
    Fail(absl::StatusCode::kInternal, FailureReason::kInternal,
         std::string(fused.status().message()));
    return;
  }
  encoder_->Encode(*fused, &r);
  out.bytes = encoder_->MaxBytes(fused->rows, fused->cols);
  AddBuffered(out.bytes);
}

void StreamSession::OnWriteDone(bool ok) {
  Guarded([&] {
    std::unique_lock lock(mu_);
    const Clock::time_point now = Clock::now();
    write_in_flight_ = false;
    --windows_out_;
    AddBuffered(-writing_.bytes);
    if (ok) {
      last_activity_ = now;
      services_.metrics->windows_sent.Increment();
      services_.metrics->window_latency_seconds.Observe(
          std::chrono::duration<double>(now - writing_.ready).count());
      services_.metrics->write_seconds.Observe(
          std::chrono::duration<double>(now - writing_.handed).count());
    } else {
      Fail(absl::StatusCode::kCancelled, FailureReason::kCancelled, "the client went away");
    }
    writing_ = Outgoing();
    write_buffer_.Clear();
    Pump(std::move(lock));
  });
}

void StreamSession::OnCancel() {
  std::unique_lock lock(mu_);
  Fail(absl::StatusCode::kCancelled, FailureReason::kCancelled,
       "cancelled (by the client, its deadline or a lost connection)");
  Pump(std::move(lock));
}

void StreamSession::Drain() {
  Guarded([&] {
    std::unique_lock lock(mu_);
    draining_ = true;
    Pump(std::move(lock));
  });
}

void StreamSession::OnDone() {
  {
    std::lock_guard lock(mu_);
    if (setup_.has_value() && setup_->models != nullptr) {
      for (const auto& m : setup_->models->models) --m->active_streams();
    }
    kept_.reset();  // the kept frames' time to live starts
  }
  if (has_slot_) {
    services_.metrics->active_streams.Decrement();
    services_.tracker->Remove(id_);
  }
  // The call is over; windows still in the batcher keep the session alive until they return.
  std::shared_ptr<StreamSession> self = std::move(self_);
}

}  // namespace gmmscore::server
