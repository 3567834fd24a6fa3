// gmmscore.v1.Scorer: each Score call gets a StreamSession and each ScoreStreams call a StreamMux
// (a StreamSession per stream on it), on the asynchronous API and our own completion queues
// (call_queues.h); each Align call an AlignCall, on gRPC's callback API.
#pragma once

#include "gmmscore/v1/scorer.grpc.pb.h"
#include "server/rpc/align_call.h"
#include "server/rpc/call_queues.h"
#include "server/rpc/stream_mux.h"
#include "server/rpc/stream_session.h"

namespace gmmscore::server {

// Score and ScoreStreams are registered raw (ByteBuffers: see StreamSession) and asynchronous,
// Align as generated.
class ScorerService final
    : public v1::Scorer::WithRawMethod_Score<v1::Scorer::WithRawMethod_ScoreStreams<
          v1::Scorer::WithCallbackMethod_Align<v1::Scorer::Service>>> {
 public:
  ScorerService(const SessionServices& services, const AlignServices& align)
      : services_(services), align_(align) {}

  // After the server has started: Score and ScoreStreams calls are taken from `queues` from now
  // on.
  void ServeScoreOn(CallQueues* queues);

  grpc::ServerUnaryReactor* Align(grpc::CallbackServerContext* context,
                                  const v1::AlignRequest* request,
                                  v1::AlignResponse* response) override;

 private:
  const SessionServices services_;
  const AlignServices align_;
};

}  // namespace gmmscore::server
