// One Score stream: the reactor of its call (bidi_call.h: a Score call, or one stream of a
// ScoreStreams call) that validates the client's messages, buffers frames into windows (W frames,
// or fewer once the oldest buffered frame has waited max_latency, or at End), hands windows to the
// Batcher and writes the scored windows back, one write in flight. Scored windows can come back out
// of order (batches in flight together, on several devices); they are fused, encoded and written in
// the order they were cut. The method is registered raw (ByteBuffers): requests are parsed here,
// and responses are written without copying their scores (response_buffer.h).
//
// Nothing here blocks: gRPC reactions, batcher deliveries and timers each lock the session, decide
// what to start (a read, a write, windows, the final status), and start it after unlocking.
//
// Backpressure and memory: a stream has at most --max-stream-windows windows out (queued for
// scoring, scored and waiting, or being written). It reads the next message only while fewer are
// out and fewer than W frames are buffered, so a client that does not read its scores stops being
// read, and gRPC flow control then stops the client's writes. Per stream the server holds at most
//   (max_frames_per_chunk + W) x dim x 4 bytes of frames, plus
//   max_stream_windows x (W x dim x 4 + W x states x 4 + W x 16) bytes of windows and responses
// (about 0.8 MB for W = 10, 39 dims, 2000 states and the defaults), plus what gRPC reads ahead
// of a stream the session is not reading (--stream-window-bytes, BDP probing off) and one
// message of at most --max-message-bytes.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "feat/online_front_end.h"
#include "gmmscore/v1/scorer.pb.h"
#include "server/config.h"
#include "server/front_end_registry.h"
#include "server/kept_frames.h"
#include "server/metrics.h"
#include "server/model_registry.h"
#include "server/rpc/bidi_call.h"
#include "server/rpc/in_order.h"
#include "server/rpc/response_encoder.h"
#include "server/rpc/stream_config.h"
#include "server/rpc/stream_fusion.h"
#include "server/rpc/window_cutter.h"
#include "server/scheduling/batcher.h"
#include "server/scheduling/timer_queue.h"

namespace gmmscore::server {

class StreamSession;

// The open streams: their slots (--max-streams), the list a drain walks, and waiting for them
// all to end. A slot is taken when a stream starts and given back in its OnDone, which gRPC calls
// exactly once per stream, whatever ended it.
class SessionTracker {
 public:
  enum class AddResult { kAdded, kFull, kDraining };

  explicit SessionTracker(int32_t max_streams) : max_streams_(max_streams) {}
  AddResult TryAdd(uint64_t id, std::weak_ptr<StreamSession> session);
  void Remove(uint64_t id);
  // No stream is added from now on; returns the open ones.
  std::vector<std::shared_ptr<StreamSession>> BeginDrain();
  // True when every stream ended before the deadline.
  bool WaitUntilEmpty(Clock::time_point deadline);
  bool draining();
  int32_t size();

 private:
  const int32_t max_streams_;
  std::mutex mu_;
  std::condition_variable empty_;
  std::map<uint64_t, std::weak_ptr<StreamSession>> sessions_;
  bool draining_ = false;
};

// What sessions share; owned by the server, which outlives every session.
struct SessionServices {
  const StreamLimits* limits;
  ModelRegistry* registry;
  FrontEndRegistry* front_ends;
  Batcher* batcher;
  TimerQueue* timers;
  Metrics* metrics;
  SessionTracker* tracker;
  KeptFrames* kept_frames;
};

class StreamSession final : public AsyncBidiReactor,
                            public WindowSink,
                            public std::enable_shared_from_this<StreamSession> {
 public:
  // Binds a session to a Score call that arrived (on_done: for Bind); the session keeps itself
  // alive until OnDone, and the call until the session is gone.
  static void Start(std::unique_ptr<BidiCall> call, std::function<void()> on_done,
                    const SessionServices& services);

  StreamSession(std::unique_ptr<BidiCall> call, const SessionServices& services, uint64_t id);
  ~StreamSession() override;

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;
  void OnWindowScored(Window window, absl::StatusOr<WindowScores> scores) override;

  // Server drain: stop reading, score and send every frame read so far, then finish UNAVAILABLE
  // with the index of the first frame not read (OK if the client had sent End already).
  void Drain();

 private:
  enum class Phase { kAwaitConfig, kStreaming, kEnded };
  struct Outgoing {
    v1::ScoreResponse response;
    SharedBytes scores;  // the response's scores where they are not in it (rows the device encoded)
    Clock::time_point ready;   // when the window's last frame was read
    Clock::time_point handed;  // when the write was decided (it starts just after)
    int64_t bytes = 0;
  };
  struct Scored {  // a window scored before an earlier one of the stream
    Clock::time_point ready;
    absl::StatusOr<std::vector<Matrix>> scores;
    EncodedRows encoded;
  };
  struct Actions {
    bool read = false;
    bool write = false;
    bool cancel = false;
    std::optional<grpc::Status> finish;
    std::optional<Clock::time_point> timer;
    int starts() const { return int(read) + int(write); }
    bool any() const { return read || write || cancel || finish || timer; }
  };

  // Runs a gRPC, batcher or timer reaction; an exception (a failed allocation) fails the stream
  // with RESOURCE_EXHAUSTED or INTERNAL instead of escaping into gRPC's thread.
  template <typename Reaction>
  void Guarded(Reaction&& reaction) noexcept;
  // Decides and starts what the current state allows, until nothing more; takes the lock.
  void Pump(std::unique_lock<std::mutex> lock);
  Actions Decide(Clock::time_point now);  // the rest run with mu_ held
  void HandleRequest(Clock::time_point now);
  void AddFeatures(const v1::FeatureChunk& chunk, Clock::time_point now);
  // Audio streams: the chunk's samples through the front end, its finished frames as features.
  void AddAudio(const v1::AudioChunk& chunk, Clock::time_point now);
  // Appends frames (dim floats each) that the front end finished to the window cutter.
  void AppendFrames(std::string_view data, int64_t frames, Clock::time_point now);
  void CutWindow(int32_t frames);
  // Fuses and encodes the next window in order into outbound_ (or fails the stream).
  // A window the device encoded has its rows in `encoded` (and none in scores).
  void Emit(int64_t first_frame, Clock::time_point ready,
            const absl::StatusOr<WindowScores>& scores, EncodedRows encoded);
  void Fail(absl::StatusCode code, FailureReason reason, const std::string& message);
  int32_t PendingFrames() const { return cutter_ ? cutter_->pending_frames() : 0; }
  int64_t NextFrame() const { return cutter_ ? cutter_->next_frame() : 0; }
  void AddBuffered(int64_t bytes);
  std::string Label() const;
  void OnTimer();

  const SessionServices services_;
  const StreamLimits& limits_;
  // Outlives OnDone: a thread that decided to cancel under the lock may call TryCancel after.
  const std::unique_ptr<BidiCall> call_;
  const uint64_t id_;
  std::shared_ptr<StreamSession> self_;  // set by Start, dropped in OnDone

  std::mutex mu_;
  Phase phase_ = Phase::kAwaitConfig;
  std::unique_ptr<OnlineFrontEnd> front_end_;  // audio streams only
  int64_t next_sample_ = 0;                    // audio streams: the next chunk's first sample
  std::vector<float> audio_scratch_;           // samples and frames of the chunk at hand
  bool has_slot_ = false;
  bool read_in_flight_ = false;
  bool write_in_flight_ = false;
  int starting_ = 0;  // reads/writes decided but not yet started (Finish waits for them)
  bool half_closed_ = false;
  bool draining_ = false;
  bool finish_called_ = false;
  absl::Status error_;             // the first error; the stream finishes with it
  grpc::ByteBuffer read_buffer_;   // the read in flight lands here
  v1::ScoreRequest request_;       // and is parsed into this
  int64_t messages_read_ = 0;      // for errors: which message could not be parsed
  Outgoing writing_;               // the write in flight
  grpc::ByteBuffer write_buffer_;  // writing_.response as sent (its scores moved into it)

  std::optional<StreamSetup> setup_;
  std::optional<StreamFusion> fusion_;
  std::shared_ptr<const FusionSpec> fusion_spec_;  // setup_->fusion, for the windows
  std::optional<ResponseEncoder> encoder_;
  Matrix fused_scratch_;  // rows the stream fuses itself (the select rule)
  std::vector<prometheus::Counter*> frames_received_;

  std::optional<WindowCutter> cutter_;        // frames read, not yet in a window (after the config)
  std::unique_ptr<KeptFrames::Writer> kept_;  // StreamConfig.keep_frames
  int32_t windows_out_ = 0;                   // submitted and not yet written
  InOrder<Scored> in_order_;  // windows cut, scored windows waiting for an earlier one
  std::deque<Outgoing> outbound_;
  int64_t buffered_bytes_ = 0;

  const Clock::time_point started_ = Clock::now();
  Clock::time_point last_activity_ = Clock::now();
  Clock::time_point timer_at_ = Clock::time_point::max();
};

}  // namespace gmmscore::server
