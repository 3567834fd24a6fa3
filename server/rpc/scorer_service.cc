#include "server/rpc/scorer_service.h"

namespace gmmscore::server {

void ScorerService::ServeScoreOn(CallQueues* queues) {
  std::vector<CallQueues::Method> methods;
  methods.push_back({[this](grpc::ServerContext* context, AsyncBidiCall::Stream* stream,
                            grpc::ServerCompletionQueue* cq,
                            void* tag) { RequestScore(context, stream, cq, cq, tag); },
                     [this](std::unique_ptr<AsyncBidiCall> call, std::function<void()> on_done) {
                       StreamSession::Start(std::move(call), std::move(on_done), services_);
                     }});
  methods.push_back({[this](grpc::ServerContext* context, AsyncBidiCall::Stream* stream,
                            grpc::ServerCompletionQueue* cq,
                            void* tag) { RequestScoreStreams(context, stream, cq, cq, tag); },
                     [this](std::unique_ptr<AsyncBidiCall> call, std::function<void()> on_done) {
                       StreamMux::Start(std::move(call), std::move(on_done), services_);
                     }});
  queues->Run(std::move(methods));
}

grpc::ServerUnaryReactor* ScorerService::Align(grpc::CallbackServerContext* context,
                                               const v1::AlignRequest* request,
                                               v1::AlignResponse* response) {
  return StartAlign(context, request, response, align_);
}

}  // namespace gmmscore::server
