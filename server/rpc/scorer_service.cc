#include "server/rpc/scorer_service.h"

namespace gmmscore::server {

grpc::ServerBidiReactor<v1::ScoreRequest, v1::ScoreResponse>* ScorerService::Score(
    grpc::CallbackServerContext* context) {
  return StreamSession::Start(context, services_);
}

grpc::ServerUnaryReactor* ScorerService::Align(grpc::CallbackServerContext* context,
                                               const v1::AlignRequest* /*request*/,
                                               v1::AlignResponse* /*response*/) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                               "Align is not served yet: use `gmmscore align` offline"));
  return reactor;
}

}  // namespace gmmscore::server
