// The client library decoders link: channels to gmmscored (plaintext or TLS, mTLS), Score
// streams with scores delivered by callback or through a decodable-style accessor, the model
// admin calls and the health check.
//
// Retries: ListModels, GetModel and the health check are retried on UNAVAILABLE (gRPC retry
// policy in the channel's service config); LoadModel, UnloadModel and Score streams are not (a
// stream has state on the server; gRPC still retries transparently a call that never reached
// it). A stream that ends UNAVAILABLE because the server drains says in its message from which
// frame to resend elsewhere; NumFramesReady() tells the same.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "gmmscore/v1/model_admin.grpc.pb.h"
#include "gmmscore/v1/scorer.grpc.pb.h"
#include "util/matrix.h"

namespace gmmscore::client {

struct ChannelOptions {
  std::string server;  // HOST:PORT
  bool plaintext = false;
  std::string ca_cert_file;      // PEM roots that sign the server; empty: the system's roots
  std::string client_cert_file;  // mTLS: this client's certificate chain and key
  std::string client_key_file;
  std::string server_name_override;  // check the server certificate for this name instead
  // A TCP connection of its own: channels to one server otherwise share one (gRPC's global
  // subchannel pool). A load generator spreads its streams over several.
  bool own_connection = false;
};

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const ChannelOptions& options);

// One scored window, decoded. scores is num_frames x width, indexed by model state id:
// width = the model's states, or (with a state subset) the largest subset id + 1; states a
// subset or BEAM_SPARSE left out are -infinity.
struct ScoreWindow {
  int64_t first_frame = 0;
  Matrix scores;
  std::vector<int32_t> best_state;
  std::vector<float> best_score;
  const v1::ScoreResponse* response = nullptr;  // the message as received, valid in the callback
};

// Decodes r (any encoding) into out; subset is the stream's StreamConfig.state_subset.
absl::Status DecodeResponse(const v1::ScoreResponse& r, const std::vector<int32_t>& subset,
                            ScoreWindow* out);

class ScoreStream {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    int32_t chunk_frames = 100;  // Push sends chunks of at most this many frames
    // Called for every window, in order, on the stream's reader thread: a slow callback slows
    // this stream only (the server stops reading it), never other streams.
    std::function<void(const ScoreWindow&)> on_window;
    bool keep_scores = true;                // keep scores for NumFramesReady/LogLikelihood
    std::chrono::milliseconds deadline{0};  // for the whole stream; 0: none
  };

  // Opens a Score stream and sends config. Fails at once only for a bad config on this side
  // (no model, dimension < 1); the server's verdict comes from Push, Finish or status().
  static absl::StatusOr<std::unique_ptr<ScoreStream>> Open(std::shared_ptr<grpc::Channel> channel,
                                                           const v1::StreamConfig& config,
                                                           Options options);
  ~ScoreStream();  // cancels a stream not finished, and waits for it
  ScoreStream(const ScoreStream&) = delete;
  ScoreStream& operator=(const ScoreStream&) = delete;

  // Sends num_frames rows of dim floats. Blocks while the server does not take them (flow
  // control). An error is the stream's final status.
  absl::Status Push(const float* frames, int64_t num_frames);
  absl::Status Push(const Matrix& frames) { return Push(frames.data.data(), frames.rows); }
  // Audio streams (a config with an AudioConfig): sends mono 16-bit samples, in chunks of
  // chunk_frames frame shifts.
  absl::Status PushAudio(const int16_t* samples, int64_t num_samples);
  // Sends End and closes the sending side.
  absl::Status End();
  // Waits for the stream's final status.
  absl::Status Finish();
  void Cancel();

  // Decodable-style access (keep_scores).
  int64_t NumFramesReady();
  // Blocks until `frames` frames are ready (true) or the stream ended short of them (false).
  bool WaitForFrames(int64_t frames);
  // Blocks until frame is ready; -infinity if the stream ended without it (see status()).
  float LogLikelihood(int64_t frame, int32_t state);
  // Blocks until frame + 1 is ready (false) or the stream ended (true if frame is its last).
  bool IsLastFrame(int64_t frame);
  // Frees the scores of frames before frame (a decoder no longer needs them).
  void DiscardFramesBefore(int64_t frame);

  int64_t frames_sent() const { return frames_sent_; }
  int64_t samples_sent() const { return samples_sent_; }
  // OK while running or after a clean end; otherwise the final status.
  absl::Status status();
  bool finished();

 private:
  ScoreStream(std::shared_ptr<grpc::Channel> channel, const v1::StreamConfig& config,
              Options options);
  void ReadLoop();
  absl::Status WaitForStatus();  // after a failed write

  const v1::StreamConfig config_;
  const Options options_;
  const std::vector<int32_t> subset_;
  std::unique_ptr<v1::Scorer::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::ScoreRequest, v1::ScoreResponse>> stream_;
  std::mutex write_mu_;  // one writer at a time
  int64_t frames_sent_ = 0;
  int64_t samples_sent_ = 0;
  bool writes_done_ = false;

  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::vector<float>> rows_;  // frames [first_kept_, first_kept_ + rows_.size())
  int64_t first_kept_ = 0;
  int64_t frames_ready_ = 0;
  bool finished_ = false;
  absl::Status final_status_;
  std::thread reader_;  // last: started once the members above exist
};

// ModelAdmin calls; mutations send the token as "authorization: Bearer TOKEN".
class AdminClient {
 public:
  AdminClient(std::shared_ptr<grpc::Channel> channel, std::string token = "");
  absl::StatusOr<std::vector<v1::ModelInfo>> List();
  absl::StatusOr<v1::ModelInfo> Get(const std::string& name);
  absl::StatusOr<v1::ModelInfo> Load(const std::string& name, const std::string& path,
                                     bool replace = false);
  absl::StatusOr<v1::ModelInfo> Unload(const std::string& name);
  // ModelAdmin.AdaptModel (the request names the base model, the new name and the utterances).
  absl::StatusOr<v1::ModelInfo> Adapt(const v1::AdaptModelRequest& request,
                                      std::chrono::milliseconds timeout = std::chrono::minutes(5));

 private:
  void Prepare(grpc::ClientContext* context, bool mutation) const;
  std::unique_ptr<v1::ModelAdmin::Stub> stub_;
  const std::string token_;
};

// grpc.health.v1 Check: SERVING -> OK; NOT_SERVING -> UNAVAILABLE; unknown service -> NOT_FOUND.
absl::Status CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                         const std::string& service = "",
                         std::chrono::milliseconds timeout = std::chrono::seconds(5));

// gmmscore.v1.Scorer/Align: one utterance's forced alignment (gmm-align-compiled's semantics;
// the request's options left 0 take its defaults). Not retried: the call is not idempotent in
// cost, and its errors name the utterance.
absl::StatusOr<v1::AlignResponse> Align(
    const std::shared_ptr<grpc::Channel>& channel, const v1::AlignRequest& request,
    std::chrono::milliseconds timeout = std::chrono::minutes(5));

absl::Status FromGrpc(const grpc::Status& status);

}  // namespace gmmscore::client
