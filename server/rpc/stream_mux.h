// One ScoreStreams call (scorer.proto): many Score streams on one gRPC call. Each stream is a
// StreamSession, exactly as on a Score call of its own; the call it is given is a stream of this
// mux, which reads the stream's requests out of the messages the mux reads and puts the stream's
// responses and status into the messages the mux writes. So the streams keep every check, limit
// and status of Score, and the call pays gRPC's and the socket's cost once per message, not once
// per window: a message carries every response ready when it is written (one write in flight;
// the batch delivery holds its writes until a batch's windows are all in, util/flush_scope.h).
//
// Threads: the mux's own reactions run on its call's queue thread; the streams' reactions
// (their reads and writes done, cancel, done) are queued and run by whichever thread is draining
// the queue, one at a time and never with the mux's lock held, so a stream that starts its next
// read from a reaction does not recurse.
//
// Memory: a stream's requests wait in the mux until its session reads them; while a stream has
// kMaxUnreadRequests of them (its session stopped reading: too many windows out), the mux stops
// reading the call, and gRPC flow control stops the client. One slow stream so holds up the other
// streams of its call, as a slow reader holds up a TCP connection: a client puts on one call the
// streams it reads at one pace. A message the mux writes carries at most kMaxMessageBytes of
// replies, or one reply larger than that (as Score would send it).
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "server/rpc/async_bidi_call.h"
#include "server/rpc/stream_session.h"
#include "util/flush_scope.h"

namespace gmmscore::server {

class StreamMux final : public AsyncBidiReactor,
                        public Flushable,
                        public std::enable_shared_from_this<StreamMux> {
 public:
  static constexpr int kMaxUnreadRequests = 16;
  // A message carries responses up to this many bytes (gRPC clients accept 4 MiB by default).
  static constexpr size_t kMaxMessageBytes = 4 << 20;

  // Binds a mux to a ScoreStreams call that arrived; it keeps itself alive until OnDone.
  static void Start(std::unique_ptr<AsyncBidiCall> call, std::function<void()> on_done,
                    const SessionServices& services);

  StreamMux(std::unique_ptr<AsyncBidiCall> call, const SessionServices& services);

  // The call's reactions.
  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;
  // Writes what the streams queued, unless a write is in flight.
  void Flush() override;

 private:
  class StreamCall;
  struct Stream;
  struct Event {
    enum class Kind { kRead, kWrite, kCancel, kDone };
    std::shared_ptr<Stream> stream;
    Kind kind;
    bool ok = false;
  };
  struct Reply {  // one entry of a message to write
    std::shared_ptr<Stream> stream;
    std::vector<grpc::Slice> slices;  // the entry's header and a response, or a status entry
    size_t bytes = 0;
    bool status = false;
  };

  // The streams' side (StreamCall forwards here).
  void Bind(const std::shared_ptr<Stream>& s, AsyncBidiReactor* reactor,
            std::function<void()> on_done);
  void StartRead(const std::shared_ptr<Stream>& s, grpc::ByteBuffer* buffer);
  void StartWrite(const std::shared_ptr<Stream>& s, const grpc::ByteBuffer* buffer);
  void Finish(const std::shared_ptr<Stream>& s, const grpc::Status& status);
  void TryCancel(const std::shared_ptr<Stream>& s);

  // With mu_ held: queue a reaction; a stream's end (it sends no more; its pending read fails,
  // its queued responses are dropped); OnDone once nothing of a finished stream is pending.
  void Queue(const std::shared_ptr<Stream>& s, Event::Kind kind, bool ok);
  void EndStream(const std::shared_ptr<Stream>& s);
  void MaybeDone(const std::shared_ptr<Stream>& s);
  void QueueStatus(const std::shared_ptr<Stream>& s, const grpc::Status& status);
  void TakeRequest(Stream& s, grpc::ByteBuffer* buffer);
  // The call failed or was cancelled: every stream ends.
  void FailCall(const grpc::Status& status);

  // Without mu_: deliver the queued reactions, then start what the call may do next (its next
  // read, or its Finish); Flush starts the writes.
  void Drain();
  void Defer();  // Flush now, or as the thread's FlushScope closes
  void HandleMessage();

  const SessionServices services_;
  const std::unique_ptr<AsyncBidiCall> call_;
  std::shared_ptr<StreamMux> self_;  // set by Start, dropped in OnDone

  std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<Stream>> streams_;  // by tag, until their OnDone
  std::deque<Event> events_;
  bool draining_ = false;
  grpc::ByteBuffer read_buffer_;
  bool read_in_flight_ = false;
  bool read_done_ = false;  // the client half-closed the call (or it is over)
  int64_t messages_read_ = 0;
  int32_t streams_over_limit_ = 0;  // streams with kMaxUnreadRequests waiting
  std::vector<Reply> queued_;       // replies for the next write
  std::vector<Reply> writing_;      // in the write in flight
  grpc::ByteBuffer write_buffer_;
  bool write_in_flight_ = false;
  bool over_ = false;  // cancelled, or a write failed: nothing more is sent
  grpc::Status status_;
  bool finish_called_ = false;
};

}  // namespace gmmscore::server
