// gmmscore bench-stream: a load generator for gmmscored. N streams, each paced at real time
// (100 frames/s) in chunks of C frames, for a given time; reports the streams that kept up, the
// frames/s scored, and the window latency percentiles, measured from the moment the chunk
// holding a window's last frame was handed to gRPC to the moment its scores arrived (their header
// and sizes checked; with --decode-scores, every score decoded as a decoder would).
//
// Thousands of streams: each an asynchronous gRPC call (async_score_call.h: no thread of its own,
// its reactions on a few completion-queue threads); a few pacer threads hand every stream its
// chunks on schedule, and the streams are spread over several channels, each its own TCP
// connection. With --streams-per-call N the streams go N to a ScoreStreams call
// (score_streams_call.h), a pacer handing over every stream due at once in one message.
#include "loadgen/stream_bench_command.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/command_line.h"
#include "client/scorer_client.h"
#include "loadgen/async_score_call.h"
#include "loadgen/bench_processes.h"
#include "loadgen/bench_result.h"
#include "loadgen/cpu_time.h"
#include "loadgen/response_header.h"
#include "loadgen/score_streams_call.h"
#include "loadgen/stream_options.h"
#include "model/random_model.h"
#include "proto/wire_codec.h"

namespace gmmscore {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kFramesPerSecond = kBenchFramesPerSecond;

struct BenchOptions {
  v1::StreamConfig config;
  int32_t chunk_frames = 10;  // --chunk-frames
  int64_t frames_per_stream = 0;
  double warmup_s = 2;           // --warmup-seconds: windows before this are not measured
  bool decode_scores = false;    // every window decoded to floats, not only its header checked
  const Matrix* pool = nullptr;  // feature rows the chunks are cut from
  // Audio streams (--front-end): 16-bit samples the chunks are cut from instead, 10 ms frames of
  // samples_per_frame samples, windows of window_samples (16 kHz: 160 and 400).
  const std::vector<int16_t>* audio_pool = nullptr;
  int32_t samples_per_frame = 160;
  int32_t window_samples = 400;
  Clock::time_point start;  // the run's clock: set once every stream is open
};

// One stream: writes its config, then each chunk when the pacer says it is due (behind a write
// still in flight, if any: then it is late), then End; reads every window and checks it (or
// decodes it: --decode-scores). Its reactions run on its queue's thread; operations start after
// mu_ is let go.
class BenchStream final : public ScoreCallReactor {
 public:
  // A stream on a Score call of its own.
  BenchStream(grpc::GenericStub* stub, grpc::CompletionQueue* cq, const BenchOptions& o)
      : BenchStream(o) {
    call_ = std::make_unique<AsyncScoreCall>(stub, &context_, cq, this);
  }
  // A stream on a ScoreStreams call that carries others.
  BenchStream(ScoreStreamsCall* streams, const BenchOptions& o) : BenchStream(o) {
    call_ = streams->NewStream(this);
  }

  // Starts the call with the stream's config.
  void Open() {
    v1::ScoreRequest config;
    *config.mutable_config() = o_.config;
    const grpc::ByteBuffer* write = nullptr;
    {
      std::lock_guard lock(mu_);
      write = Queue(Outgoing::kConfig, -1, config);
    }
    call_->StartCall();
    call_->StartRead(&response_);
    Send(write);
  }

  // Until the config is written (or the stream ended): real time starts once every stream is
  // open, so that opening thousands of streams makes no sender late.
  void WaitUntilOpen() {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [this] { return open_ || done_; });
  }

  // The first chunk is due at o.start + phase; before the pacer starts.
  void Schedule(Clock::duration phase) { first_due_ = o_.start + phase; }

  // When the next chunk is due; time_point::max() once all are handed over. Like SendDue, called
  // by the stream's pacer only.
  Clock::time_point NextDue() const {
    return next_chunk_ < chunks_ ? Due(next_chunk_) : Clock::time_point::max();
  }

  // Hands gRPC every chunk due by now, and End after the last.
  void SendDue(Clock::time_point now) {
    const grpc::ByteBuffer* write = nullptr;
    {
      std::lock_guard lock(mu_);
      for (; next_chunk_ < chunks_ && Due(next_chunk_) <= now; ++next_chunk_) {
        const int64_t first = next_chunk_ * o_.chunk_frames;
        const int32_t n = int32_t(std::min<int64_t>(o_.chunk_frames, o_.frames_per_stream - first));
        v1::ScoreRequest request;
        if (o_.audio_pool != nullptr) {
          const int64_t spf = o_.samples_per_frame;
          const size_t room = o_.audio_pool->size() - size_t(o_.chunk_frames * spf);
          const size_t at = size_t(first * spf) % room;
          v1::AudioChunk* chunk = request.mutable_audio();
          chunk->set_first_sample(first * spf);
          chunk->mutable_samples()->assign(
              reinterpret_cast<const char*>(o_.audio_pool->data() + at), size_t(n * spf) * 2);
        } else {
          const int32_t at = int32_t(first % (o_.pool->rows - o_.chunk_frames));
          v1::FeatureChunk* chunk = request.mutable_features();
          chunk->set_first_frame(first);
          wire::AppendFloat32({o_.pool->row(at), size_t(n) * size_t(o_.pool->cols)},
                              chunk->mutable_data());
        }
        if (const grpc::ByteBuffer* w = Queue(Outgoing::kChunk, next_chunk_, request); w != nullptr)
          write = w;
      }
      if (next_chunk_ == chunks_ && !end_queued_) {
        end_queued_ = true;
        v1::ScoreRequest end;
        end.mutable_end();
        if (const grpc::ByteBuffer* w = Queue(Outgoing::kEnd, -1, end); w != nullptr) write = w;
      }
    }
    Send(write);
  }

  void OnWriteDone(bool ok) override {
    const grpc::ByteBuffer* write = nullptr;
    bool writes_done = false;
    {
      std::lock_guard lock(mu_);
      writing_ = false;
      if (!ok) {
        broken_ = true;  // the call is over; OnDone has its status
        return;
      }
      const Outgoing& written = writes_.front();
      writes_done = written.kind == Outgoing::kEnd;
      if (written.kind == Outgoing::kChunk &&
          std::chrono::duration<double>(write_handed_ - o_.start).count() >= o_.warmup_s) {
        write_times_s_.push_back(
            std::chrono::duration<double>(Clock::now() - write_handed_).count());
      }
      if (written.kind == Outgoing::kConfig) {
        open_ = true;
        changed_.notify_all();
      }
      if (!writes_done) {
        writes_.pop_front();
        write = NextWrite();
      }
    }
    if (writes_done) call_->StartWritesDone();
    Send(write);
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // the server finished the stream
    const int64_t now_ns = (Clock::now() - o_.start).count();
    int64_t first_frame = 0, num_frames = 0;
    const absl::Status decoded = Check(&first_frame, &num_frames);
    bool keep_reading = false;
    {
      std::lock_guard lock(mu_);
      if (decoded.ok() && first_frame == frames_scored_) {
        frames_scored_ += num_frames;
        const int64_t last = first_frame + num_frames - 1;
        if (double(now_ns) * 1e-9 >= o_.warmup_s) {
          // From the chunk that completed the window's last frame: its features (or, audio, the
          // last sample of its analysis window, so the front end's look-ahead counts as latency).
          const int64_t chunk =
              o_.audio_pool == nullptr
                  ? last / o_.chunk_frames
                  : std::min<int64_t>(chunks_ - 1,
                                      (last * o_.samples_per_frame + o_.window_samples - 1) /
                                          (int64_t(o_.chunk_frames) * o_.samples_per_frame));
          latencies_s_.push_back(double(now_ns - sent_ns_[size_t(chunk)]) * 1e-9);
        }
        keep_reading = true;
      } else if (error_.ok()) {
        error_ = decoded.ok()
                     ? absl::DataLossError(absl::StrCat("a window starts at frame ", first_frame,
                                                        ", expected ", frames_scored_))
                     : decoded;
      }
    }
    // After a bad window the call is cancelled; the read then fails and the call ends.
    if (!keep_reading) call_->TryCancel();
    call_->StartRead(&response_);
  }

  void OnDone(const grpc::Status& status) override {
    std::lock_guard lock(mu_);
    if (error_.ok() && !status.ok()) {
      error_ = absl::Status(absl::StatusCode(status.error_code()), status.error_message());
    }
    done_ = true;
    changed_.notify_all();
  }

  void WaitUntilDone() {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [this] { return done_; });
  }

  // After WaitUntilDone.
  const absl::Status& error() const { return error_; }
  int64_t frames_scored() const { return frames_scored_; }
  double worst_lag_s() const { return std::chrono::duration<double>(worst_lag_).count(); }
  const std::vector<double>& latencies_s() const { return latencies_s_; }
  const std::vector<double>& write_times_s() const { return write_times_s_; }

 private:
  explicit BenchStream(const BenchOptions& o)
      : o_(o),
        chunks_((o.frames_per_stream + o.chunk_frames - 1) / o.chunk_frames),
        period_(std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(o.chunk_frames / kFramesPerSecond))),
        sent_ns_(size_t(chunks_)) {}

  // A request, serialized when queued.
  struct Outgoing {
    enum Kind { kConfig, kChunk, kEnd } kind;
    int64_t chunk;  // kChunk: its index
    grpc::ByteBuffer bytes;
  };

  Clock::time_point Due(int64_t chunk) const { return first_due_ + chunk * period_; }

  // The window just read: its first frame and frames, from its header (sizes checked) or, with
  // --decode-scores, from every score decoded.
  absl::Status Check(int64_t* first_frame, int64_t* num_frames) {
    if (!o_.decode_scores) {
      auto header = ReadResponseHeader(&response_);
      if (!header.ok()) return header.status();
      *first_frame = header->first_frame;
      *num_frames = header->num_frames;
      return absl::OkStatus();
    }
    v1::ScoreResponse response;
    if (!grpc::SerializationTraits<v1::ScoreResponse>::Deserialize(&response_, &response).ok())
      return absl::DataLossError("a response that is not a ScoreResponse");
    if (absl::Status s = client::DecodeResponse(response, {}, &window_); !s.ok()) return s;
    *first_frame = window_.first_frame;
    *num_frames = window_.scores.rows;
    return absl::OkStatus();
  }

  // With mu_ held: queues a message; returns it when it is to be written now.
  const grpc::ByteBuffer* Queue(Outgoing::Kind kind, int64_t chunk,
                                const v1::ScoreRequest& request) {
    Outgoing& out = writes_.emplace_back(Outgoing{kind, chunk, {}});
    bool own_buffer = false;
    const grpc::Status serialized =
        grpc::SerializationTraits<v1::ScoreRequest>::Serialize(request, &out.bytes, &own_buffer);
    if (!serialized.ok()) {
      // Not for a message of ours into a fresh buffer; were it to happen, the stream fails with
      // why, nothing more is written, and Send cancels the call.
      writes_.pop_back();
      if (error_.ok()) {
        error_ = absl::InternalError(
            absl::StrCat("cannot serialize a request: ", serialized.error_message()));
      }
      broken_ = true;
      cancel_ = true;
      return nullptr;
    }
    return writing_ || broken_ ? nullptr : NextWrite();
  }
  // After Queue, with mu_ released: starts the write it handed out, or the cancellation it asked
  // for.
  void Send(const grpc::ByteBuffer* write) {
    if (write != nullptr) call_->StartWrite(write);
    if (cancel_.exchange(false)) call_->TryCancel();
  }
  // With mu_ held: the front message, marked as being written, or null when none is queued.
  const grpc::ByteBuffer* NextWrite() {
    if (writes_.empty()) return nullptr;
    const Outgoing& next = writes_.front();
    const Clock::time_point now = Clock::now();
    write_handed_ = now;
    if (next.kind == Outgoing::kChunk) {
      // Handed to gRPC now: the latency of its windows counts from here, and the lag is how
      // late that is.
      sent_ns_[size_t(next.chunk)] = (now - o_.start).count();
      worst_lag_ = std::max(worst_lag_, now - Due(next.chunk));
    }
    writing_ = true;
    return &next.bytes;
  }

  const BenchOptions& o_;
  const int64_t chunks_;
  const Clock::duration period_;
  Clock::time_point first_due_;
  grpc::ClientContext context_;  // a Score call's
  std::unique_ptr<ScoreCall> call_;

  std::mutex mu_;
  std::condition_variable changed_;
  bool open_ = false;            // the config is written
  std::deque<Outgoing> writes_;  // the front one is being written
  bool writing_ = false;
  Clock::time_point write_handed_;     // when the write in flight was handed to gRPC
  std::vector<double> write_times_s_;  // chunks after the warm-up: handed -> OnWriteDone
  bool broken_ = false;                // a write failed: nothing more is written
  std::atomic<bool> cancel_ = false;   // Queue could not serialize a request: cancel the call
  bool end_queued_ = false;
  int64_t next_chunk_ = 0;
  std::vector<int64_t> sent_ns_;  // per chunk, since the start
  Clock::duration worst_lag_{0};
  grpc::ByteBuffer response_;
  client::ScoreWindow window_;  // --decode-scores
  int64_t frames_scored_ = 0;
  std::vector<double> latencies_s_;  // windows after the warm-up
  absl::Status error_;
  bool done_ = false;
};

// A pacer thread: hands each of its streams every chunk when due, earliest first.
void Pace(const std::vector<BenchStream*>& streams) {
  using Entry = std::pair<Clock::time_point, BenchStream*>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> due;
  for (BenchStream* s : streams) due.emplace(s->NextDue(), s);
  while (!due.empty()) {
    if (const Clock::time_point when = due.top().first; when != Clock::time_point::max())
      std::this_thread::sleep_until(when);
    // Every stream due by now; those that share a ScoreStreams call send in one message.
    FlushScope one_message_a_call;
    const Clock::time_point now = Clock::now();
    while (!due.empty() && due.top().first <= now) {
      BenchStream* stream = due.top().second;
      due.pop();
      stream->SendDue(now);
      if (const Clock::time_point next = stream->NextDue(); next != Clock::time_point::max()) {
        due.emplace(next, stream);
      }
    }
  }
}

absl::StatusOr<v1::StreamConfig::Encoding> ParseEncoding(const std::string& name) {
  if (name == "float32") return v1::StreamConfig::FLOAT32;
  if (name == "float16") return v1::StreamConfig::FLOAT16;
  if (name == "relative16") return v1::StreamConfig::RELATIVE16;
  if (name == "beam-sparse") return v1::StreamConfig::BEAM_SPARSE;
  return absl::InvalidArgumentError(absl::StrCat(
      "--encoding '", name, "': expected float32, float16, relative16 or beam-sparse"));
}

// bench-stream's options, each bound to the field that holds its default.
struct StreamBenchSettings {
  std::string model, encoding_name = "float32", front_end, daemon_pid;
  int32_t streams = 64, window = 10, max_states = 500, connections = 0, per_call = 1, pacers = 4,
          cq_threads = 0, processes = 1;
  float beam = 10.0f;
  double seconds = 20.0, max_lag_ms = 100.0;
  BenchOptions o;  // --chunk-frames, --decode-scores and --warmup-seconds are its fields
};

void RegisterStreamBenchOptions(Args& args, StreamBenchSettings* s) {
  AddChannelOptions(args);
  args.Register("model", &s->model, "model name on the server")
      .Register("streams", &s->streams, "concurrent streams")
      .Register("chunk-frames", &s->o.chunk_frames,
                "frames per message; one every C x 10 ms per stream")
      .Register("window", &s->window, "frames per response window")
      .Register("encoding", &s->encoding_name,
                "scores as float32, float16, relative16 or beam-sparse")
      .Register("beam", &s->beam, "beam-sparse: natural-log beam")
      .Register("max-states", &s->max_states, "beam-sparse: at most N states a frame (0: no limit)")
      .Register("front-end", &s->front_end,
                "send 16-bit audio (16 kHz, random speech-like) through this server front end "
                "instead of features")
      .Register("decode-scores", &s->o.decode_scores,
                "decode every window's scores to float32 as a decoder would (default: check each "
                "window's header and sizes only, so the load generator's CPU drives streams)")
      .Register("daemon-pid", &s->daemon_pid,
                "the server's process on this machine: report its CPU per stream-second (/proc)")
      .Register("seconds", &s->seconds, "audio seconds per stream")
      .Register("warmup-seconds", &s->o.warmup_s, "windows in the first S seconds are not measured")
      .Register("max-lag-ms", &s->max_lag_ms,
                "a stream keeps real time if no chunk of it was handed to gRPC later than this "
                "after its due time")
      .Register("connections", &s->connections,
                "TCP connections the streams are spread over (0: one per 100)")
      .Register("streams-per-call", &s->per_call,
                "1: every stream a Score call of its own; N > 1: ScoreStreams calls of N streams "
                "each, their messages carrying several streams' chunks and windows")
      .Register("pacer-threads", &s->pacers, "threads that send the streams' chunks on schedule")
      .Register("cq-threads", &s->cq_threads,
                "threads per process, each with a gRPC completion queue, that read the streams' "
                "scores (0: the hardware threads shared out over the processes)")
      .Register("processes", &s->processes,
                "processes the streams are split over, each with its own gRPC threads, "
                "connections and pacers (so the load generator is not the limit); the report adds "
                "them up");
}

// 20 s of tones and noise, on the 16-bit scale: the audio streams' chunks are cut from it.
std::vector<int16_t> SpeechLikeAudio(size_t min_samples) {
  std::mt19937 noise_rng(3);
  std::normal_distribution<double> noise(0.0, 300.0);
  std::vector<int16_t> audio(std::max<size_t>(320000, min_samples));
  for (size_t i = 0; i < audio.size(); ++i) {
    const double t = double(i) / 16000.0;
    const double v = 3000.0 * std::sin(2 * M_PI * (150 + 30 * std::sin(t)) * t) + noise(noise_rng);
    audio[i] = int16_t(std::clamp(std::lround(v), -32768L, 32767L));
  }
  return audio;
}

// Runs this process's share of the streams against the server and measures them.
absl::StatusOr<BenchResult> RunShare(StreamBenchSettings s, v1::StreamConfig::Encoding encoding,
                                     const Args& args, const BenchShare& share) {
  BenchOptions& o = s.o;
  const int32_t num_connections =
      s.connections > 0 ? std::max(1, s.connections / s.processes) : (share.num_streams + 99) / 100;
  // Each connection a channel with a subchannel pool of its own, hence its own TCP connection.
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  std::shared_ptr<grpc::Channel> first_channel;
  for (int32_t i = 0; i < num_connections; ++i) {
    auto channel = ChannelFromArgs(args, /*own_connection=*/num_connections > 1);
    if (!channel.ok()) return channel.status();
    if (i == 0) first_channel = *channel;
    stubs.push_back(std::make_unique<grpc::GenericStub>(*channel));
  }
  auto info = client::AdminClient(first_channel).Get(s.model);
  if (!info.ok()) return info.status();

  o.config.add_models(s.model);
  o.config.set_dim(info->dim());
  o.config.set_window_frames(s.window);
  o.config.set_encoding(encoding);
  if (encoding == v1::StreamConfig::BEAM_SPARSE) {
    o.config.set_beam(s.beam);
    o.config.set_max_states(s.max_states);
  }
  o.frames_per_stream = int64_t(s.seconds * kFramesPerSecond);
  const Matrix pool =
      RandomFeatures(std::max(1000, 2 * o.chunk_frames), info->dim(), 0.0f, 3.0f, 1);
  o.pool = &pool;
  std::vector<int16_t> audio;
  if (!s.front_end.empty()) {
    audio = SpeechLikeAudio(size_t(4 * o.chunk_frames * o.samples_per_frame));
    o.audio_pool = &audio;
    o.config.mutable_audio()->set_front_end(s.front_end);
    o.config.mutable_audio()->set_sample_rate_hz(16000);
  }

  if (share.first_stream == 0) {
    std::fprintf(
        stderr,
        "gmmscore bench-stream: %d streams x %.0f s at %.0f frames/s, chunks of %d frames, "
        "window %d, %s (%s), model %s (%d states x %lld Gaussians x %d dims) on %s over %d "
        "connection%s\n",
        s.streams, s.seconds, kFramesPerSecond, o.chunk_frames, s.window, s.encoding_name.c_str(),
        o.decode_scores ? "every score decoded" : "headers and sizes checked", info->name().c_str(),
        info->num_states(), static_cast<long long>(info->num_gaussians()), info->dim(),
        args.Get("server").c_str(), num_connections, num_connections > 1 ? "s" : "");
    if (s.processes > 1) {
      std::fprintf(stderr, "  (in %d processes of about %d streams)\n", s.processes,
                   share.num_streams);
    }
  }
  ClientQueues queues(
      s.cq_threads > 0 ? s.cq_threads
                       : std::max(1, int32_t(std::thread::hardware_concurrency()) / s.processes));
  // --streams-per-call > 1: stream i on call i / N, call c over connection c; a pacer sends
  // for whole calls, so that what is due together leaves in one message.
  std::vector<std::shared_ptr<ScoreStreamsCall>> calls;
  if (s.per_call > 1) {
    for (int32_t c = 0; c < (share.num_streams + s.per_call - 1) / s.per_call; ++c) {
      calls.push_back(std::make_shared<ScoreStreamsCall>(stubs[size_t(c % num_connections)].get(),
                                                         queues.queue(size_t(c))));
      calls.back()->Start();
    }
  }
  std::vector<std::unique_ptr<BenchStream>> bench(static_cast<size_t>(share.num_streams));
  std::vector<std::vector<BenchStream*>> paced(static_cast<size_t>(s.pacers));
  for (int i = 0; i < share.num_streams; ++i) {
    o.config.set_stream_id(absl::StrCat("bench-", share.first_stream + i));
    size_t pacer = size_t(i % s.pacers);
    if (calls.empty()) {
      bench[size_t(i)] = std::make_unique<BenchStream>(stubs[size_t(i % num_connections)].get(),
                                                       queues.queue(size_t(i)), o);
    } else {
      bench[size_t(i)] = std::make_unique<BenchStream>(calls[size_t(i / s.per_call)].get(), o);
      pacer = size_t(i / s.per_call % s.pacers);
    }
    bench[size_t(i)]->Open();
    paced[pacer].push_back(bench[size_t(i)].get());
  }
  for (const auto& stream : bench) stream->WaitUntilOpen();
  // Streams start spread over one chunk period, as independent real-time sources would.
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> phase(0.0, o.chunk_frames / kFramesPerSecond);
  const double self_cpu0 = SelfCpuSeconds();
  o.start = Clock::now();
  for (const auto& stream : bench) {
    stream->Schedule(
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(phase(rng))));
  }
  std::vector<std::thread> pacer_threads;
  for (const std::vector<BenchStream*>& group : paced) pacer_threads.emplace_back(Pace, group);
  for (std::thread& t : pacer_threads) t.join();
  for (const auto& stream : bench) stream->WaitUntilDone();
  BenchResult result;
  result.wall_s = std::chrono::duration<double>(Clock::now() - o.start).count();
  for (const auto& call : calls) {
    if (const grpc::Status status = call->Close(); !status.ok() && result.first_error.empty())
      result.first_error = absl::StrCat("a ScoreStreams call ended ", status.error_message());
  }
  result.cpu_s = SelfCpuSeconds() - self_cpu0;
  for (const auto& stream : bench) {
    result.frames += stream->frames_scored();
    result.lags.push_back(stream->worst_lag_s());
    result.latencies.insert(result.latencies.end(), stream->latencies_s().begin(),
                            stream->latencies_s().end());
    result.writes.insert(result.writes.end(), stream->write_times_s().begin(),
                         stream->write_times_s().end());
    if (!stream->error().ok()) {
      if (result.first_error.empty()) result.first_error = std::string(stream->error().message());
      continue;
    }
    ++result.ok;
    if (stream->worst_lag_s() * 1000.0 <= s.max_lag_ms) ++result.kept_up;
  }
  return result;
}

}  // namespace

int RunBenchStream(int argc, char** argv) {
  Args args("bench-stream", "--server HOST:PORT --model NAME [--streams N] [options]");
  StreamBenchSettings s;
  RegisterStreamBenchOptions(args, &s);
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (s.model.empty()) {
    return Fail("bench-stream", absl::InvalidArgumentError("--model is required"));
  }
  auto encoding = ParseEncoding(s.encoding_name);
  if (!encoding.ok()) return Fail("bench-stream", encoding.status());
  if (s.streams < 1 || s.o.chunk_frames < 1 || s.window < 1 || s.seconds <= 0 ||
      s.connections < 0 || s.pacers < 1 || s.processes < 1 || s.processes > s.streams ||
      s.cq_threads < 0 || s.per_call < 1) {
    return Fail("bench-stream", absl::InvalidArgumentError(
                                    "--streams, --chunk-frames, --window, --seconds, "
                                    "--pacer-threads, --processes and --streams-per-call must be "
                                    "> 0 (at most one process a stream), --connections and "
                                    "--cq-threads >= 0"));
  }
  const double daemon_cpu0 = s.daemon_pid.empty() ? -1 : ProcessCpuSeconds(s.daemon_pid);
  BenchReportContext context{.streams = s.streams,
                             .processes = s.processes,
                             .warmup_s = s.o.warmup_s,
                             .max_lag_ms = s.max_lag_ms};
  const auto daemon_cpu = [&] {
    return daemon_cpu0 < 0 ? -1 : ProcessCpuSeconds(s.daemon_pid) - daemon_cpu0;
  };
  auto shared = ShareOutStreams(s.streams, s.processes);
  if (!shared.ok()) return Fail("bench-stream", shared.status());
  if (BenchResult* total = std::get_if<BenchResult>(&*shared)) {  // the children's parent
    context.daemon_cpu_s = daemon_cpu();
    return PrintBenchReport(std::move(*total), context);
  }
  const BenchShare& share = std::get<BenchShare>(*shared);
  auto result = RunShare(s, *encoding, args, share);
  if (!result.ok()) return Fail("bench-stream", result.status());
  if (share.result_fd >= 0) EndShare(share, *result);  // a child: the parent reports
  context.processes = 1;
  context.daemon_cpu_s = daemon_cpu();
  return PrintBenchReport(*std::move(result), context);
}

}  // namespace gmmscore
