#include "server/rpc/scorer_service.h"

namespace gmmscore::server {

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* ScorerService::Score(
    grpc::CallbackServerContext* context) {
  return StreamSession::Start(context, services_);
}

grpc::ServerUnaryReactor* ScorerService::Align(grpc::CallbackServerContext* context,
                                               const v1::AlignRequest* request,
                                               v1::AlignResponse* response) {
  return StartAlign(context, request, response, align_);
}

}  // namespace gmmscore::server
