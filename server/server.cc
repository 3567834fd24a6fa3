#include "server/server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "util/status_macros.h"

namespace gmmscore::server {
namespace {

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("--", flag, " ", path, ": cannot open"));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (!in && !in.eof()) {
    return absl::DataLossError(absl::StrCat("--", flag, " ", path, ": read error"));
  }
  return contents.str();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeCredentials(const ServerConfig& c) {
  if (c.plaintext) return grpc::InsecureServerCredentials();
  GMM_ASSIGN_OR_RETURN(const std::string cert, ReadSmallFile(c.tls_cert_file, "tls-cert"));
  GMM_ASSIGN_OR_RETURN(const std::string key, ReadSmallFile(c.tls_key_file, "tls-key"));
  grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (!c.tls_client_ca_file.empty()) {
    GMM_ASSIGN_OR_RETURN(const std::string ca,
                         ReadSmallFile(c.tls_client_ca_file, "tls-client-ca"));
    // mTLS: a client must present a certificate that this CA signed.
    options = grpc::SslServerCredentialsOptions(
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    options.pem_root_certs = ca;
  }
  options.pem_key_cert_pairs.push_back({key, cert});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::string> ReadAdminToken(const ServerConfig& c) {
  if (c.admin_token_file.empty()) return std::string();
  GMM_ASSIGN_OR_RETURN(const std::string token,
                       ReadSmallFile(c.admin_token_file, "admin-token-file"));
  const std::string trimmed(absl::StripAsciiWhitespace(token));
  if (trimmed.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--admin-token-file ", c.admin_token_file, ": the file is empty"));
  }
  return trimmed;
}

}  // namespace

GmmscoreServer::GmmscoreServer(ServerConfig config)
    : config_(std::move(config)), tracker_(config_.max_streams) {}

absl::StatusOr<std::unique_ptr<GmmscoreServer>> GmmscoreServer::Start(ServerConfig config) {
  GMM_RETURN_IF_ERROR(ValidateConfig(config));
  GMM_ASSIGN_OR_RETURN(const std::shared_ptr<grpc::ServerCredentials> credentials,
                       MakeCredentials(config));
  GMM_ASSIGN_OR_RETURN(const std::string token, ReadAdminToken(config));

  std::unique_ptr<GmmscoreServer> s(new GmmscoreServer(std::move(config)));
  const ServerConfig& c = s->config_;
  GMM_ASSIGN_OR_RETURN(s->lanes_, LaneSet::Create(c, &s->metrics_));
  s->registry_ = std::make_unique<ModelRegistry>(
      c, s->lanes_.get(), &s->metrics_,
      [health = &s->health_](const std::string& name, bool serving) {
        health->SetModel(name, serving);
      });
  s->front_ends_ = std::make_unique<FrontEndRegistry>(c.model_root);
  for (const ModelSpec& f : c.front_ends) {
    GMM_RETURN_IF_ERROR(s->front_ends_->Load(f.name, f.path));
  }
  s->batcher_ = std::make_unique<Batcher>(s->lanes_->batcher_options(), s->lanes_->lanes(),
                                          s->lanes_->delivery(), &s->metrics_);
  if (!c.metrics_listen.empty()) {
    GMM_RETURN_IF_ERROR(s->metrics_.Serve(c.metrics_listen));
  }
  if (std::vector<BatchViterbi*> gpus = s->lanes_->viterbis(); !gpus.empty()) {
    s->viterbi_queue_ = std::make_unique<ViterbiQueue>(std::move(gpus));
  }
  s->align_workers_ = std::make_unique<TaskQueue>(c.align.threads, "align");
  s->kept_frames_ = std::make_unique<KeptFrames>(
      KeptFramesLimits{c.adapt.max_frames, c.adapt.max_kept_bytes, c.adapt.kept_ttl});
  s->scorer_service_ = std::make_unique<ScorerService>(
      SessionServices{&c.stream, s->registry_.get(), s->front_ends_.get(), s->batcher_.get(),
                      &s->timers_, &s->metrics_, &s->tracker_, s->kept_frames_.get()},
      AlignServices{&c.align, s->registry_.get(), s->batcher_.get(), s->align_workers_.get(),
                    s->viterbi_queue_.get(), &s->metrics_, &s->alignments_in_progress_});
  s->admin_service_ = std::make_unique<ModelAdminService>(s->registry_.get(), &s->loader_, token,
                                                          c.adapt, s->kept_frames_.get());

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(c.listen, credentials, &s->port_);
  builder.SetMaxReceiveMessageSize(c.max_message_bytes);
  // What gRPC buffers of a stream the server is not reading is its HTTP/2 receive window. BDP
  // probing would grow that window to megabytes on a fast link, so it is off and the window is
  // --stream-window-bytes: with the session's own bound, a stream's memory is bounded.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, c.stream_window_bytes);
  builder.RegisterService(s->scorer_service_.get());
  builder.RegisterService(s->admin_service_.get());
  const int32_t stream_threads = c.stream_threads > 0
                                     ? c.stream_threads
                                     : std::max(2, int32_t(std::thread::hardware_concurrency()));
  s->score_queues_ = std::make_unique<CallQueues>(&builder, stream_threads);
  s->server_ = builder.BuildAndStart();
  if (s->server_ == nullptr || s->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("--listen ", c.listen, ": cannot listen there"));
  }
  s->scorer_service_->ServeScoreOn(s->score_queues_.get());
  s->health_.SetServerReady(false);
  s->health_.Attach(s->server_->GetHealthCheckService());
  return s;
}

absl::Status GmmscoreServer::LoadStartupModels() {
  for (const ModelSpec& m : config_.models) {
    GMM_RETURN_IF_ERROR(registry_->Load(m.name, m.path, /*replace=*/false).status());
  }
  health_.SetServerReady(true);
  return absl::OkStatus();
}

bool GmmscoreServer::Drain(absl::Duration timeout) {
  if (drained_) return true;
  drained_ = true;
  const Clock::time_point deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                        absl::ToChronoNanoseconds(timeout));
  health_.Drain();
  batcher_->Flush();
  for (const std::shared_ptr<StreamSession>& session : tracker_.BeginDrain()) session->Drain();
  const bool clean = tracker_.WaitUntilEmpty(deadline);
  // Every stream has ended, or the time is up: cancel what is left (a stream whose client
  // stopped reading, health watches) now. Without a deadline gRPC would also wait for idle
  // client connections to go away.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
  score_queues_->Shutdown();
  return clean;
}

GmmscoreServer::~GmmscoreServer() {
  if (server_ != nullptr) Drain(absl::ZeroDuration());
}

}  // namespace gmmscore::server
