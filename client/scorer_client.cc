#include "client/scorer_client.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "proto/wire_codec.h"
#include "util/status_macros.h"

namespace gmmscore::client {
namespace {

constexpr float kMissing = -std::numeric_limits<float>::infinity();

// Idempotent reads are retried when the server is unavailable (restarting, draining).
constexpr char kServiceConfig[] = R"json({
  "methodConfig": [{
    "name": [
      {"service": "gmmscore.v1.ModelAdmin", "method": "ListModels"},
      {"service": "gmmscore.v1.ModelAdmin", "method": "GetModel"},
      {"service": "grpc.health.v1.Health", "method": "Check"}
    ],
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "0.1s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
    }
  }]
})json";

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(what, " ", path, ": cannot open"));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

}  // namespace

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> MakeChannel(const ChannelOptions& options) {
  if (options.server.empty()) return absl::InvalidArgumentError("no server address");
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // a window of W frames x all states can be large
  args.SetServiceConfigJSON(kServiceConfig);
  if (options.own_connection) args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.plaintext) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    if (!options.ca_cert_file.empty()) {
      GMM_ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadPem(options.ca_cert_file, "CA certificate"));
    }
    if (!options.client_cert_file.empty() || !options.client_key_file.empty()) {
      GMM_ASSIGN_OR_RETURN(ssl.pem_cert_chain,
                           ReadPem(options.client_cert_file, "client certificate"));
      GMM_ASSIGN_OR_RETURN(ssl.pem_private_key, ReadPem(options.client_key_file, "client key"));
    }
    if (!options.server_name_override.empty()) {
      args.SetSslTargetNameOverride(options.server_name_override);
    }
    credentials = grpc::SslCredentials(ssl);
  }
  return grpc::CreateCustomChannel(options.server, credentials, args);
}

absl::Status DecodeResponse(const v1::ScoreResponse& r, const std::vector<int32_t>& subset,
                            ScoreWindow* out) {
  const int32_t n = r.num_frames(), cols = r.num_states();
  const auto bad = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat("response for frames ", r.first_frame(), "+", n,
                                            " of stream '", r.stream_id(), "': ", what));
  };
  if (n < 0 || cols < 0) return bad("negative sizes");
  if (!subset.empty() && size_t(cols) != subset.size())
    return bad("columns do not match the subset");
  if (r.best_state_size() != n || r.best_score_size() != n) return bad("best-state lists");
  const int32_t width = subset.empty() ? cols : *std::max_element(subset.begin(), subset.end()) + 1;
  out->first_frame = r.first_frame();
  out->best_state.assign(r.best_state().begin(), r.best_state().end());
  out->best_score.assign(r.best_score().begin(), r.best_score().end());
  out->scores.Resize(n, width);
  const size_t values = size_t(n) * size_t(cols);
  switch (r.encoding()) {
    case v1::StreamConfig::FLOAT32:
    case v1::StreamConfig::FLOAT16:
    case v1::StreamConfig::RELATIVE16: {
      const bool wide = r.encoding() == v1::StreamConfig::FLOAT32;
      if (r.scores().size() != values * (wide ? 4 : 2)) return bad("score bytes");
      // Rows decoded one by one: RELATIVE16 rows are relative to their frame's best score.
      const auto decode = [&](std::span<float> dst) {
        const size_t row_bytes = size_t(cols) * (wide ? 4 : 2);
        for (int32_t t = 0; t < n; ++t) {
          const std::string_view bytes(r.scores().data() + size_t(t) * row_bytes, row_bytes);
          const std::span<float> row = dst.subspan(size_t(t) * cols, size_t(cols));
          switch (r.encoding()) {
            case v1::StreamConfig::FLOAT16:
              wire::ReadFloat16(bytes, row);
              break;
            case v1::StreamConfig::RELATIVE16:
              wire::ReadRelative16(bytes, r.best_score(t), row);
              break;
            default:
              wire::ReadFloat32(bytes, row);
          }
        }
      };
      if (subset.empty()) {  // rows are already in model state order
        decode(std::span<float>(out->scores.data.data(), values));
        return absl::OkStatus();
      }
      std::vector<float> dense(values);
      decode(dense);
      std::fill(out->scores.data.begin(), out->scores.data.end(), kMissing);
      for (int32_t t = 0; t < n; ++t) {
        for (int32_t i = 0; i < cols; ++i)
          out->scores.at(t, subset[i]) = dense[size_t(t) * cols + i];
      }
      return absl::OkStatus();
    }
    case v1::StreamConfig::BEAM_SPARSE: {
      if (r.sparse_counts_size() != n) return bad("sparse counts");
      size_t total = 0;
      for (uint32_t c : r.sparse_counts()) total += c;
      if (r.scores().size() != total * 4 || r.sparse_states().size() != total * 4) {
        return bad("sparse bytes");
      }
      std::vector<float> kept(total);
      std::vector<int32_t> ids(total);
      wire::ReadFloat32(r.scores(), kept);
      wire::ReadInt32(r.sparse_states(), ids);
      std::fill(out->scores.data.begin(), out->scores.data.end(), kMissing);
      size_t at = 0;
      for (int32_t t = 0; t < n; ++t) {
        for (uint32_t i = 0; i < r.sparse_counts(t); ++i, ++at) {
          if (ids[at] < 0 || ids[at] >= width) return bad("sparse state id out of range");
          out->scores.at(t, ids[at]) = kept[at];
        }
      }
      return absl::OkStatus();
    }
    default:
      return bad(absl::StrCat("unknown encoding ", int(r.encoding())));
  }
}

ScoreStream::ScoreStream(std::shared_ptr<grpc::Channel> channel, const v1::StreamConfig& config,
                         Options options)
    : config_(config),
      options_(std::move(options)),
      subset_(config.state_subset().begin(), config.state_subset().end()),
      stub_(v1::Scorer::NewStub(channel)) {}

absl::StatusOr<std::unique_ptr<ScoreStream>> ScoreStream::Open(
    std::shared_ptr<grpc::Channel> channel, const v1::StreamConfig& config, Options options) {
  if (config.models().empty()) return absl::InvalidArgumentError("the stream names no model");
  if (config.dim() < 1 && !config.has_audio()) {
    return absl::InvalidArgumentError("the stream's dimension must be >= 1");
  }
  if (options.chunk_frames < 1) return absl::InvalidArgumentError("chunk_frames must be >= 1");
  std::unique_ptr<ScoreStream> s(new ScoreStream(std::move(channel), config, std::move(options)));
  if (s->options_.deadline.count() > 0) {
    s->context_.set_deadline(std::chrono::system_clock::now() + s->options_.deadline);
  }
  s->stream_ = s->stub_->Score(&s->context_);
  v1::ScoreRequest request;
  *request.mutable_config() = config;
  // A failed write means the call is over already; the reader collects the status.
  s->stream_->Write(request);
  s->reader_ = std::thread([stream = s.get()] { stream->ReadLoop(); });
  return s;
}

ScoreStream::~ScoreStream() {
  if (!finished()) context_.TryCancel();
  if (reader_.joinable()) reader_.join();
}

void ScoreStream::ReadLoop() {
  v1::ScoreResponse response;
  ScoreWindow window;
  absl::Status error;
  while (stream_->Read(&response)) {
    error = DecodeResponse(response, subset_, &window);
    if (error.ok() && response.first_frame() != frames_ready_) {
      error = absl::DataLossError(absl::StrCat("a window starts at frame ", response.first_frame(),
                                               ", expected ", frames_ready_));
    }
    if (!error.ok()) {
      context_.TryCancel();
      break;
    }
    window.response = &response;
    if (options_.on_window) options_.on_window(window);
    std::lock_guard lock(mu_);
    if (options_.keep_scores) {
      for (int32_t t = 0; t < window.scores.rows; ++t) {
        rows_.emplace_back(window.scores.row(t), window.scores.row(t) + window.scores.cols);
      }
    }
    frames_ready_ += window.scores.rows;
    changed_.notify_all();
  }
  // The call is over (Read failed): a write in progress returns at once, then Finish is safe.
  std::lock_guard write_lock(write_mu_);
  const grpc::Status status = stream_->Finish();
  std::lock_guard lock(mu_);
  finished_ = true;
  final_status_ = error.ok() ? FromGrpc(status) : error;
  changed_.notify_all();
}

absl::Status ScoreStream::WaitForStatus() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [this] { return finished_; });
  if (!final_status_.ok()) return final_status_;
  return absl::FailedPreconditionError("the stream has ended");
}

absl::Status ScoreStream::Push(const float* frames, int64_t num_frames) {
  std::unique_lock write_lock(write_mu_);
  if (writes_done_) return absl::FailedPreconditionError("Push after End");
  {
    std::lock_guard lock(mu_);
    if (finished_) {
      return final_status_.ok() ? absl::FailedPreconditionError("the stream has ended")
                                : final_status_;
    }
  }
  const int64_t dim = config_.dim();
  v1::ScoreRequest request;
  for (int64_t done = 0; done < num_frames;) {
    const int64_t n = std::min<int64_t>(options_.chunk_frames, num_frames - done);
    v1::FeatureChunk* chunk = request.mutable_features();
    chunk->set_first_frame(frames_sent_);
    chunk->mutable_data()->clear();
    wire::AppendFloat32({frames + done * dim, size_t(n * dim)}, chunk->mutable_data());
    if (!stream_->Write(request)) {
      write_lock.unlock();
      return WaitForStatus();
    }
    frames_sent_ += n;
    done += n;
  }
  return absl::OkStatus();
}

absl::Status ScoreStream::PushAudio(const int16_t* samples, int64_t num_samples) {
  std::unique_lock write_lock(write_mu_);
  if (writes_done_) return absl::FailedPreconditionError("PushAudio after End");
  {
    std::lock_guard lock(mu_);
    if (finished_) {
      return final_status_.ok() ? absl::FailedPreconditionError("the stream has ended")
                                : final_status_;
    }
  }
  // Chunks of chunk_frames frame shifts at the config's sample rate (10 ms frames).
  const int64_t per_chunk =
      std::max<int64_t>(1, int64_t(options_.chunk_frames) * config_.audio().sample_rate_hz() / 100);
  v1::ScoreRequest request;
  for (int64_t done = 0; done < num_samples;) {
    const int64_t n = std::min<int64_t>(per_chunk, num_samples - done);
    v1::AudioChunk* chunk = request.mutable_audio();
    chunk->set_first_sample(samples_sent_);
    std::string* bytes = chunk->mutable_samples();
    bytes->resize(size_t(2 * n));
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t v = static_cast<uint16_t>(samples[done + i]);
      (*bytes)[size_t(2 * i)] = static_cast<char>(v & 0xFF);
      (*bytes)[size_t(2 * i + 1)] = static_cast<char>(v >> 8);
    }
    if (!stream_->Write(request)) {
      write_lock.unlock();
      return WaitForStatus();
    }
    samples_sent_ += n;
    done += n;
  }
  return absl::OkStatus();
}

absl::Status ScoreStream::End() {
  std::unique_lock write_lock(write_mu_);
  if (writes_done_) return absl::OkStatus();
  writes_done_ = true;
  v1::ScoreRequest request;
  request.mutable_end();
  if (!stream_->Write(request) || !stream_->WritesDone()) {
    write_lock.unlock();
    return WaitForStatus();
  }
  return absl::OkStatus();
}

absl::Status ScoreStream::Finish() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [this] { return finished_; });
  return final_status_;
}

void ScoreStream::Cancel() { context_.TryCancel(); }

bool ScoreStream::finished() {
  std::lock_guard lock(mu_);
  return finished_;
}

absl::Status ScoreStream::status() {
  std::lock_guard lock(mu_);
  return final_status_;
}

int64_t ScoreStream::NumFramesReady() {
  std::lock_guard lock(mu_);
  return frames_ready_;
}

bool ScoreStream::WaitForFrames(int64_t frames) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return frames_ready_ >= frames || finished_; });
  return frames_ready_ >= frames;
}

float ScoreStream::LogLikelihood(int64_t frame, int32_t state) {
  if (!WaitForFrames(frame + 1)) return kMissing;
  std::lock_guard lock(mu_);
  if (frame < first_kept_ || !options_.keep_scores) return kMissing;
  const std::vector<float>& row = rows_[size_t(frame - first_kept_)];
  return state >= 0 && size_t(state) < row.size() ? row[size_t(state)] : kMissing;
}

bool ScoreStream::IsLastFrame(int64_t frame) {
  if (WaitForFrames(frame + 2)) return false;
  std::lock_guard lock(mu_);
  return frame == frames_ready_ - 1;
}

void ScoreStream::DiscardFramesBefore(int64_t frame) {
  std::lock_guard lock(mu_);
  while (first_kept_ < frame && !rows_.empty()) {
    rows_.pop_front();
    ++first_kept_;
  }
}

AdminClient::AdminClient(std::shared_ptr<grpc::Channel> channel, std::string token)
    : stub_(v1::ModelAdmin::NewStub(std::move(channel))), token_(std::move(token)) {}

void AdminClient::Prepare(grpc::ClientContext* context, bool mutation) const {
  if (mutation && !token_.empty()) context->AddMetadata("authorization", "Bearer " + token_);
  if (!mutation) context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
}

absl::StatusOr<std::vector<v1::ModelInfo>> AdminClient::List() {
  grpc::ClientContext context;
  Prepare(&context, false);
  v1::ListModelsResponse response;
  if (grpc::Status s = stub_->ListModels(&context, {}, &response); !s.ok()) return FromGrpc(s);
  return std::vector<v1::ModelInfo>(response.models().begin(), response.models().end());
}

absl::StatusOr<v1::ModelInfo> AdminClient::Get(const std::string& name) {
  grpc::ClientContext context;
  Prepare(&context, false);
  v1::GetModelRequest request;
  request.set_name(name);
  v1::ModelInfo info;
  if (grpc::Status s = stub_->GetModel(&context, request, &info); !s.ok()) return FromGrpc(s);
  return info;
}

absl::StatusOr<v1::ModelInfo> AdminClient::Load(const std::string& name, const std::string& path,
                                                bool replace) {
  grpc::ClientContext context;
  Prepare(&context, true);
  v1::LoadModelRequest request;
  request.set_name(name);
  request.set_path(path);
  request.set_replace(replace);
  v1::ModelInfo info;
  if (grpc::Status s = stub_->LoadModel(&context, request, &info); !s.ok()) return FromGrpc(s);
  return info;
}

absl::StatusOr<v1::ModelInfo> AdminClient::Adapt(const v1::AdaptModelRequest& request,
                                                 std::chrono::milliseconds timeout) {
  grpc::ClientContext context;
  Prepare(&context, true);
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::ModelInfo info;
  if (grpc::Status s = stub_->AdaptModel(&context, request, &info); !s.ok()) return FromGrpc(s);
  return info;
}

absl::StatusOr<v1::ModelInfo> AdminClient::Unload(const std::string& name) {
  grpc::ClientContext context;
  Prepare(&context, true);
  v1::UnloadModelRequest request;
  request.set_name(name);
  v1::ModelInfo info;
  if (grpc::Status s = stub_->UnloadModel(&context, request, &info); !s.ok()) return FromGrpc(s);
  return info;
}

absl::StatusOr<v1::AlignResponse> Align(const std::shared_ptr<grpc::Channel>& channel,
                                        const v1::AlignRequest& request,
                                        std::chrono::milliseconds timeout) {
  auto stub = v1::Scorer::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::AlignResponse response;
  if (grpc::Status s = stub->Align(&context, request, &response); !s.ok()) return FromGrpc(s);
  return response;
}

absl::Status CheckHealth(const std::shared_ptr<grpc::Channel>& channel, const std::string& service,
                         std::chrono::milliseconds timeout) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  if (grpc::Status s = stub->Check(&context, request, &response); !s.ok()) return FromGrpc(s);
  if (response.status() == grpc::health::v1::HealthCheckResponse::SERVING) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("'", service, "' is not serving"));
}

}  // namespace gmmscore::client
