// gmmscore.v1.Scorer on gRPC's callback API: each Score call gets a StreamSession reactor, each
// Align call an AlignCall.
#pragma once

#include "gmmscore/v1/scorer.grpc.pb.h"
#include "server/rpc/align_call.h"
#include "server/rpc/stream_session.h"

namespace gmmscore::server {

class ScorerService final : public v1::Scorer::CallbackService {
 public:
  ScorerService(const SessionServices& services, const AlignServices& align)
      : services_(services), align_(align) {}

  grpc::ServerBidiReactor<v1::ScoreRequest, v1::ScoreResponse>* Score(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* Align(grpc::CallbackServerContext* context,
                                  const v1::AlignRequest* request,
                                  v1::AlignResponse* response) override;

 private:
  const SessionServices services_;
  const AlignServices align_;
};

}  // namespace gmmscore::server
