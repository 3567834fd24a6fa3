// Many of the load generator's streams on one ScoreStreams call (scorer.proto): each stream gets
// a ScoreCall that behaves as a Score call of its own (async_score_call.h), while its messages
// travel as entries of the call's messages. A stream's writes wait while the call's write is in
// flight and then go together; a thread that hands over many streams' chunks at once (the pacer)
// opens a FlushScope so that they leave in one message.
#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "loadgen/async_score_call.h"
#include "util/flush_scope.h"

namespace gmmscore {

class ScoreStreamsCall final : public ScoreCallReactor,
                               public Flushable,
                               public std::enable_shared_from_this<ScoreStreamsCall> {
 public:
  ScoreStreamsCall(grpc::GenericStub* stub, grpc::CompletionQueue* cq);
  ScoreStreamsCall(const ScoreStreamsCall&) = delete;
  ScoreStreamsCall& operator=(const ScoreStreamsCall&) = delete;

  // Starts the call; then streams may be added.
  void Start();
  // A new stream on the call (tags 1, 2, ...), whose reactions go to `reactor`.
  std::unique_ptr<ScoreCall> NewStream(ScoreCallReactor* reactor);
  // Once every stream on it has ended: half-closes the call and waits until it is over; its
  // status (OK unless the server failed it).
  grpc::Status Close();

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;
  void Flush() override;

 private:
  class Stream;
  struct State;
  struct Entry {  // one entry of a message to write
    std::shared_ptr<State> stream;
    std::vector<grpc::Slice> slices;
    bool write = false;  // a request write (its stream is told OnWriteDone); else a flag only
  };
  using Reactions = std::vector<std::function<void()>>;

  // With mu_ held; reactions to run once it is let go.
  void Queue(const std::shared_ptr<State>& s, std::string header, const grpc::ByteBuffer* request,
             bool write);
  void MaybeDone(const std::shared_ptr<State>& s, Reactions* reactions);
  void EndAll(const grpc::Status& status, Reactions* reactions);
  void Defer();

  grpc::ClientContext context_;
  AsyncScoreCall call_;
  grpc::ByteBuffer read_buffer_;
  grpc::ByteBuffer write_buffer_;

  std::mutex mu_;
  std::condition_variable changed_;
  uint64_t next_tag_ = 1;
  std::map<uint64_t, std::shared_ptr<State>> streams_;
  std::vector<Entry> queued_;
  std::vector<Entry> writing_;
  bool write_in_flight_ = false;
  bool over_ = false;  // the call's read failed: the server ended it
  bool done_ = false;
  grpc::Status status_;
};

}  // namespace gmmscore
