// gmmscore.v1.Scorer on gRPC's callback API: each Score call gets a StreamSession reactor, each
// Align call an AlignCall.
#pragma once

#include "gmmscore/v1/scorer.grpc.pb.h"
#include "server/rpc/align_call.h"
#include "server/rpc/stream_session.h"

namespace gmmscore::server {

// Score is registered raw (ByteBuffers: see StreamSession), Align as generated.
class ScorerService final : public v1::Scorer::WithRawCallbackMethod_Score<
                                v1::Scorer::WithCallbackMethod_Align<v1::Scorer::Service>> {
 public:
  ScorerService(const SessionServices& services, const AlignServices& align)
      : services_(services), align_(align) {}

  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Score(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* Align(grpc::CallbackServerContext* context,
                                  const v1::AlignRequest* request,
                                  v1::AlignResponse* response) override;

 private:
  const SessionServices services_;
  const AlignServices align_;
};

}  // namespace gmmscore::server
