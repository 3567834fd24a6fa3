// One Align call (gmmscore.v1.Scorer/Align): forced alignment of an utterance to its compiled
// training graph, with gmm-align-compiled's semantics (align/align_utterance.h). The call is
// checked and its graph parsed on a worker thread, never on gRPC's; its frames are cut into
// windows and scored by the Batcher on the lanes, batched with the streams' windows (on a GPU the
// model already resident there scores them); once every window is back, the Viterbi runs on a
// worker thread and the call finishes. Limits: --max-align-frames, --max-align-graph-arcs,
// --max-concurrent-alignments (RESOURCE_EXHAUSTED beyond); a bad graph or bad features fail that
// call alone with INVALID_ARGUMENT naming the utterance.
//
// Options left 0 in the request take gmm-align-compiled's defaults: beam 200, retry beam 0 (none),
// transition, self-loop and acoustic scales 1.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "gmmscore/v1/scorer.pb.h"
#include "server/config.h"
#include "server/metrics.h"
#include "server/model_registry.h"
#include "server/scheduling/batcher.h"
#include "server/scheduling/task_queue.h"
#include "server/scheduling/viterbi_queue.h"

namespace gmmscore::server {

// What Align calls share; owned by the server, which outlives every call.
struct AlignServices {
  const AlignLimits* limits;
  ModelRegistry* registry;
  Batcher* batcher;
  TaskQueue* workers;
  ViterbiQueue* viterbi;  // the GPUs' Viterbi; null: the CPU aligner, on a worker
  Metrics* metrics;
  std::atomic<int32_t>* in_progress;
};

// Starts the call; the reactor finishes it.
grpc::ServerUnaryReactor* StartAlign(grpc::CallbackServerContext* context,
                                     const v1::AlignRequest* request, v1::AlignResponse* response,
                                     const AlignServices& services);

}  // namespace gmmscore::server
