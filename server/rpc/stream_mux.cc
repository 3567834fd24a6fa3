#include "server/rpc/stream_mux.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/stream_mux_wire.h"

namespace gmmscore::server {

struct StreamMux::Stream {
  explicit Stream(uint64_t t) : tag(t) {}
  const uint64_t tag;
  AsyncBidiReactor* reactor = nullptr;  // set by Bind
  std::function<void()> on_done;
  // Reactions wait here until StreamSession::Start has returned: the session counts its slot
  // there, after Bind, and a reaction before that would see a session half started.
  bool started = false;
  std::vector<Event> before_start;
  std::deque<grpc::ByteBuffer> unread;    // requests read, not yet taken by a read
  grpc::ByteBuffer* read_into = nullptr;  // the stream's read, waiting for a request
  bool writes_done = false;               // the client half-closed the stream
  int pending = 0;                        // reads and writes started and not yet reported
  bool finish_called = false;
  bool ended = false;     // nothing more goes to the client: status queued, cancelled, call over
  bool finished = false;  // Finish has completed: its status written, or none to write
  bool done_queued = false;
};

// What a StreamSession holds as its call: one stream of the mux.
class StreamMux::StreamCall final : public BidiCall {
 public:
  StreamCall(std::shared_ptr<StreamMux> mux, std::shared_ptr<Stream> stream)
      : mux_(std::move(mux)), stream_(std::move(stream)) {}
  void Bind(AsyncBidiReactor* reactor, std::function<void()> on_done) override {
    mux_->Bind(stream_, reactor, std::move(on_done));
  }
  void StartRead(grpc::ByteBuffer* buffer) override { mux_->StartRead(stream_, buffer); }
  void StartWrite(const grpc::ByteBuffer* buffer) override { mux_->StartWrite(stream_, buffer); }
  void Finish(const grpc::Status& status) override { mux_->Finish(stream_, status); }
  void TryCancel() override { mux_->TryCancel(stream_); }

 private:
  const std::shared_ptr<StreamMux> mux_;
  const std::shared_ptr<Stream> stream_;
};

void StreamMux::Start(std::unique_ptr<AsyncBidiCall> call, std::function<void()> on_done,
                      const SessionServices& services) {
  AsyncBidiCall* c = call.get();
  auto mux = std::make_shared<StreamMux>(std::move(call), services);
  mux->self_ = mux;
  c->Bind(mux.get(), std::move(on_done));
  mux->Drain();  // starts the first read
}

StreamMux::StreamMux(std::unique_ptr<AsyncBidiCall> call, const SessionServices& services)
    : services_(services), call_(std::move(call)) {}

void StreamMux::Queue(const std::shared_ptr<Stream>& s, Event::Kind kind, bool ok) {
  if (kind == Event::Kind::kRead || kind == Event::Kind::kWrite) --s->pending;
  Event event{s, kind, ok};
  if (!s->started) {
    s->before_start.push_back(std::move(event));
  } else {
    events_.push_back(std::move(event));
  }
  MaybeDone(s);
}

void StreamMux::MaybeDone(const std::shared_ptr<Stream>& s) {
  if (!s->finished || s->pending > 0 || s->done_queued) return;
  s->done_queued = true;
  Queue(s, Event::Kind::kDone, true);
}

void StreamMux::TakeRequest(Stream& s, grpc::ByteBuffer* buffer) {
  if (int(s.unread.size()) == kMaxUnreadRequests) --streams_over_limit_;
  buffer->Swap(&s.unread.front());
  s.unread.pop_front();
}

void StreamMux::EndStream(const std::shared_ptr<Stream>& s) {
  if (s->ended) return;
  s->ended = true;
  Queue(s, Event::Kind::kCancel, true);
  if (s->read_into != nullptr) {
    s->read_into = nullptr;
    Queue(s, Event::Kind::kRead, false);
  }
  if (int(s->unread.size()) >= kMaxUnreadRequests) --streams_over_limit_;
  s->unread.clear();
  // Its responses not yet in a write are dropped; those in the write in flight report with it.
  std::erase_if(queued_, [&](const Reply& r) {
    if (r.stream != s || r.status) return false;
    Queue(s, Event::Kind::kWrite, false);
    return true;
  });
}

void StreamMux::QueueStatus(const std::shared_ptr<Stream>& s, const grpc::Status& status) {
  const std::string entry =
      wire::StreamStatusReply(s->tag, int32_t(status.error_code()), status.error_message());
  Reply reply{s, {}, entry.size(), true};
  reply.slices.emplace_back(entry);
  queued_.push_back(std::move(reply));
}

void StreamMux::FailCall(const grpc::Status& status) {
  if (status_.ok()) status_ = status;
  over_ = true;
  // Statuses queued are not sent: their streams are finished now.
  std::erase_if(queued_, [&](const Reply& r) {
    if (!r.status) return false;
    r.stream->finished = true;
    MaybeDone(r.stream);
    return true;
  });
  for (const auto& [tag, s] : streams_) {
    EndStream(s);
    if (s->finish_called) {
      s->finished = true;
      MaybeDone(s);
    }
  }
}

void StreamMux::Bind(const std::shared_ptr<Stream>& s, AsyncBidiReactor* reactor,
                     std::function<void()> on_done) {
  std::lock_guard lock(mu_);
  s->reactor = reactor;
  s->on_done = std::move(on_done);
}

void StreamMux::StartRead(const std::shared_ptr<Stream>& s, grpc::ByteBuffer* buffer) {
  {
    std::lock_guard lock(mu_);
    ++s->pending;
    if (s->ended || s->finish_called) {
      Queue(s, Event::Kind::kRead, false);
    } else if (!s->unread.empty()) {
      TakeRequest(*s, buffer);
      Queue(s, Event::Kind::kRead, true);
    } else if (s->writes_done || read_done_) {
      Queue(s, Event::Kind::kRead, false);
    } else {
      s->read_into = buffer;
    }
  }
  Drain();
}

void StreamMux::StartWrite(const std::shared_ptr<Stream>& s, const grpc::ByteBuffer* buffer) {
  bool queued = false;
  {
    std::lock_guard lock(mu_);
    ++s->pending;
    if (s->ended || over_) {
      Queue(s, Event::Kind::kWrite, false);
    } else {
      std::vector<grpc::Slice> response;
      const size_t bytes = buffer->Length();
      // Dump fails only for a buffer gRPC did not make (never here): the write then fails.
      if (!buffer->Dump(&response).ok()) {
        Queue(s, Event::Kind::kWrite, false);
      } else {
        const std::string header = wire::StreamReplyHeader(s->tag, bytes);
        Reply reply{s, {}, header.size() + bytes, false};
        reply.slices.reserve(response.size() + 1);
        reply.slices.emplace_back(header);
        for (grpc::Slice& slice : response) reply.slices.push_back(std::move(slice));
        queued_.push_back(std::move(reply));
        queued = true;
      }
    }
  }
  if (queued) Defer();
  Drain();
}

void StreamMux::Finish(const std::shared_ptr<Stream>& s, const grpc::Status& status) {
  bool queued = false;
  {
    std::lock_guard lock(mu_);
    s->finish_called = true;
    if (s->read_into != nullptr) {
      s->read_into = nullptr;
      Queue(s, Event::Kind::kRead, false);
    }
    if (int(s->unread.size()) >= kMaxUnreadRequests) --streams_over_limit_;
    s->unread.clear();
    if (s->ended || over_) {
      s->ended = true;
      s->finished = true;
      MaybeDone(s);
    } else {
      s->ended = true;
      QueueStatus(s, status);
      queued = true;
    }
  }
  if (queued) Defer();
  Drain();
}

void StreamMux::TryCancel(const std::shared_ptr<Stream>& s) {
  bool queued = false;
  {
    std::lock_guard lock(mu_);
    if (s->ended || s->finish_called) return;
    EndStream(s);
    // The client learns of it as a Score client would: CANCELLED.
    if (!over_) {
      QueueStatus(s, grpc::Status(grpc::StatusCode::CANCELLED, "the server cancelled the stream"));
      queued = true;
    }
  }
  if (queued) Defer();
  Drain();
}

void StreamMux::Defer() {
  if (!FlushScope::Defer(shared_from_this())) Flush();
}

void StreamMux::Flush() {
  std::unique_lock lock(mu_);
  if (write_in_flight_ || queued_.empty() || over_ || finish_called_) return;
  size_t n = 0;
  size_t bytes = 0;
  for (; n < queued_.size(); ++n) {
    if (n > 0 && bytes + queued_[n].bytes > kMaxMessageBytes) break;
    bytes += queued_[n].bytes;
  }
  writing_.assign(std::make_move_iterator(queued_.begin()),
                  std::make_move_iterator(queued_.begin() + std::ptrdiff_t(n)));
  queued_.erase(queued_.begin(), queued_.begin() + std::ptrdiff_t(n));
  std::vector<grpc::Slice> slices;
  for (Reply& r : writing_) {
    for (grpc::Slice& slice : r.slices) slices.push_back(std::move(slice));
    r.slices.clear();
  }
  write_buffer_ = grpc::ByteBuffer(slices.data(), slices.size());
  write_in_flight_ = true;
  lock.unlock();
  services_.metrics->stream_messages_sent.Increment();
  call_->StartWrite(&write_buffer_);
}

void StreamMux::OnWriteDone(bool ok) {
  {
    std::lock_guard lock(mu_);
    write_in_flight_ = false;
    write_buffer_.Clear();
    for (Reply& r : writing_) {
      if (r.status) {
        r.stream->finished = true;
        MaybeDone(r.stream);
      } else {
        Queue(r.stream, Event::Kind::kWrite, ok);
      }
    }
    writing_.clear();
    if (!ok) FailCall(grpc::Status(grpc::StatusCode::CANCELLED, "the call's write failed"));
  }
  Flush();
  Drain();
}

void StreamMux::OnReadDone(bool ok) {
  if (ok) {
    HandleMessage();
  } else {
    std::lock_guard lock(mu_);
    read_in_flight_ = false;
    read_done_ = true;
    for (const auto& [tag, s] : streams_) {
      if (s->read_into != nullptr && s->unread.empty()) {
        s->read_into = nullptr;
        Queue(s, Event::Kind::kRead, false);
      }
    }
  }
  Drain();
}

void StreamMux::HandleMessage() {
  std::vector<std::shared_ptr<Stream>> started;
  {
    std::lock_guard lock(mu_);
    read_in_flight_ = false;
    ++messages_read_;
    absl::StatusOr<std::vector<wire::StreamRequestView>> entries =
        wire::ReadStreamsRequest(read_buffer_);
    read_buffer_.Clear();
    if (!entries.ok()) {
      FailCall(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("ScoreStreams message ", messages_read_, ": ", entries.status().message())));
      return;
    }
    if (over_) return;
    for (wire::StreamRequestView& e : *entries) {
      std::shared_ptr<Stream> s;
      if (auto it = streams_.find(e.tag);
          it != streams_.end() && !it->second->ended && !it->second->finish_called) {
        s = it->second;
      } else if (e.has_request && !e.cancel && e.holds_config) {
        // A new stream (under a tag that is free, or whose stream has ended).
        s = std::make_shared<Stream>(e.tag);
        streams_[e.tag] = s;
        started.push_back(s);
      } else {
        continue;  // for a stream that ended: it was on its way then
      }
      if (e.cancel) {
        EndStream(s);
        continue;
      }
      if (e.has_request) {
        // The request's bytes stay in the slices gRPC read them into.
        if (s->read_into != nullptr) {
          s->read_into->Swap(&e.request);
          s->read_into = nullptr;
          Queue(s, Event::Kind::kRead, true);
        } else {
          s->unread.emplace_back().Swap(&e.request);
          if (int(s->unread.size()) == kMaxUnreadRequests) ++streams_over_limit_;
        }
      }
      if (e.writes_done) {
        s->writes_done = true;
        if (s->read_into != nullptr) {
          s->read_into = nullptr;
          Queue(s, Event::Kind::kRead, false);
        }
      }
    }
  }
  for (const auto& s : started) {
    StreamSession::Start(std::make_unique<StreamCall>(shared_from_this(), s), {}, services_);
    std::lock_guard lock(mu_);
    s->started = true;
    for (Event& e : s->before_start) events_.push_back(std::move(e));
    s->before_start.clear();
  }
}

void StreamMux::OnCancel() {
  {
    std::lock_guard lock(mu_);
    FailCall(grpc::Status(grpc::StatusCode::CANCELLED, "the call was cancelled"));
  }
  Drain();
}

void StreamMux::OnDone() { self_.reset(); }

void StreamMux::Drain() {
  std::unique_lock lock(mu_);
  if (!draining_) {
    draining_ = true;
    while (!events_.empty()) {
      Event e = std::move(events_.front());
      events_.pop_front();
      AsyncBidiReactor* reactor = e.stream->reactor;
      std::function<void()> on_done;
      if (e.kind == Event::Kind::kDone) on_done = std::move(e.stream->on_done);
      lock.unlock();
      switch (e.kind) {
        case Event::Kind::kRead:
          reactor->OnReadDone(e.ok);
          break;
        case Event::Kind::kWrite:
          reactor->OnWriteDone(e.ok);
          break;
        case Event::Kind::kCancel:
          reactor->OnCancel();
          break;
        case Event::Kind::kDone:
          reactor->OnDone();
          if (on_done) on_done();
          break;
      }
      lock.lock();
      if (e.kind == Event::Kind::kDone) {
        auto it = streams_.find(e.stream->tag);
        if (it != streams_.end() && it->second == e.stream) streams_.erase(it);
      }
    }
    draining_ = false;
  }
  // What the call does next: read while no stream has too many requests waiting; finish once the
  // client is done with the call (or it failed, or the server is draining: then UNAVAILABLE, as
  // a Score call gets) and every stream on it has ended.
  const bool idle = streams_.empty() && events_.empty() && !write_in_flight_ && queued_.empty();
  if (idle && status_.ok() && !read_done_ && !over_ && services_.tracker->draining()) {
    status_ = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                           "the server is draining and takes no new streams");
  }
  const bool read =
      !read_in_flight_ && !read_done_ && !over_ && status_.ok() && streams_over_limit_ == 0;
  if (read) read_in_flight_ = true;
  const bool finish = !finish_called_ && idle && (read_done_ || over_ || !status_.ok());
  if (finish) finish_called_ = true;
  const grpc::Status status = status_;
  lock.unlock();
  if (read) call_->StartRead(&read_buffer_);
  if (finish) call_->Finish(status);
}

}  // namespace gmmscore::server
