#include "loadgen/score_streams_call.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/stream_mux_wire.h"

namespace gmmscore {

struct ScoreStreamsCall::State {
  State(uint64_t t, ScoreCallReactor* r) : tag(t), reactor(r) {}
  const uint64_t tag;
  ScoreCallReactor* const reactor;
  std::deque<grpc::ByteBuffer> unread;    // responses not yet taken by a read
  grpc::ByteBuffer* read_into = nullptr;  // the stream's read, waiting for a response
  int pending = 0;                        // reads, writes and WritesDone not yet reported
  bool has_status = false;
  bool done = false;
  grpc::Status status;
};

class ScoreStreamsCall::Stream final : public ScoreCall {
 public:
  Stream(std::shared_ptr<ScoreStreamsCall> call, std::shared_ptr<State> state)
      : call_(std::move(call)), state_(std::move(state)) {}

  void StartCall() override {}  // the call is started already

  void StartRead(grpc::ByteBuffer* response) override {
    Reactions reactions;
    {
      std::lock_guard lock(call_->mu_);
      ++state_->pending;
      if (!state_->unread.empty()) {
        response->Swap(&state_->unread.front());
        state_->unread.pop_front();
        reactions.push_back(Read(true));
      } else if (state_->has_status) {
        reactions.push_back(Read(false));
        call_->MaybeDone(state_, &reactions);
      } else {
        state_->read_into = response;
      }
    }
    for (auto& r : reactions) r();
  }

  void StartWrite(const grpc::ByteBuffer* request) override {
    {
      std::lock_guard lock(call_->mu_);
      ++state_->pending;
      call_->Queue(state_, {}, request, true);
    }
    call_->Defer();
  }

  void StartWritesDone() override {
    {
      std::lock_guard lock(call_->mu_);
      ++state_->pending;
      call_->Queue(state_, wire::StreamRequestHeader(state_->tag, false, 0, true, false), nullptr,
                   false);
    }
    call_->Defer();
  }

  // The server is told, and sends no status: the stream ends CANCELLED here.
  void TryCancel() override {
    Reactions reactions;
    {
      std::lock_guard lock(call_->mu_);
      if (state_->has_status) return;
      ++state_->pending;
      call_->Queue(state_, wire::StreamRequestHeader(state_->tag, false, 0, false, true), nullptr,
                   false);
      state_->has_status = true;
      state_->status = grpc::Status(grpc::StatusCode::CANCELLED, "cancelled by the client");
      if (state_->read_into != nullptr) {
        state_->read_into = nullptr;
        reactions.push_back(Read(false));
      }
    }
    call_->Defer();
    for (auto& r : reactions) r();
  }

 private:
  // With mu_ held: the read's reaction, counted as reported.
  std::function<void()> Read(bool ok) {
    --state_->pending;
    return [reactor = state_->reactor, ok] { reactor->OnReadDone(ok); };
  }

  const std::shared_ptr<ScoreStreamsCall> call_;
  const std::shared_ptr<State> state_;
};

ScoreStreamsCall::ScoreStreamsCall(grpc::GenericStub* stub, grpc::CompletionQueue* cq)
    : call_(stub, &context_, cq, this, kScoreStreamsMethod) {}

void ScoreStreamsCall::Start() {
  call_.StartCall();
  call_.StartRead(&read_buffer_);
}

std::unique_ptr<ScoreCall> ScoreStreamsCall::NewStream(ScoreCallReactor* reactor) {
  std::lock_guard lock(mu_);
  const uint64_t tag = next_tag_++;
  auto state = std::make_shared<State>(tag, reactor);
  streams_.emplace(tag, state);
  return std::make_unique<Stream>(shared_from_this(), std::move(state));
}

void ScoreStreamsCall::Queue(const std::shared_ptr<State>& s, std::string header,
                             const grpc::ByteBuffer* request, bool write) {
  Entry entry{s, {}, write};
  if (request != nullptr) {
    std::vector<grpc::Slice> body;
    // Dump fails only for a buffer that holds nothing, whose body is empty, as its length says.
    if (!request->Dump(&body).ok()) body.clear();
    entry.slices.emplace_back(
        wire::StreamRequestHeader(s->tag, true, request->Length(), false, false));
    for (grpc::Slice& slice : body) entry.slices.push_back(std::move(slice));
  } else {
    entry.slices.emplace_back(header);
  }
  queued_.push_back(std::move(entry));
}

void ScoreStreamsCall::Defer() {
  if (!FlushScope::Defer(shared_from_this())) Flush();
}

void ScoreStreamsCall::Flush() {
  Reactions reactions;
  bool write = false;
  {
    std::lock_guard lock(mu_);
    if (write_in_flight_ || queued_.empty()) return;
    if (over_) {
      // The call is over: what was queued fails.
      for (Entry& e : queued_) {
        --e.stream->pending;
        if (e.write) reactions.push_back([r = e.stream->reactor] { r->OnWriteDone(false); });
        MaybeDone(e.stream, &reactions);
      }
      queued_.clear();
    } else {
      writing_.swap(queued_);
      std::vector<grpc::Slice> slices;
      for (Entry& e : writing_) {
        for (grpc::Slice& slice : e.slices) slices.push_back(std::move(slice));
        e.slices.clear();
      }
      write_buffer_ = grpc::ByteBuffer(slices.data(), slices.size());
      write_in_flight_ = write = true;
    }
  }
  for (auto& r : reactions) r();
  if (write) call_.StartWrite(&write_buffer_);
}

void ScoreStreamsCall::OnWriteDone(bool ok) {
  Reactions reactions;
  {
    std::lock_guard lock(mu_);
    write_in_flight_ = false;
    for (Entry& e : writing_) {
      --e.stream->pending;
      if (e.write) reactions.push_back([r = e.stream->reactor, ok] { r->OnWriteDone(ok); });
      MaybeDone(e.stream, &reactions);
    }
    writing_.clear();
  }
  for (auto& r : reactions) r();
  Flush();
}

void ScoreStreamsCall::OnReadDone(bool ok) {
  Reactions reactions;
  {
    std::lock_guard lock(mu_);
    if (!ok) {
      over_ = true;
      EndAll(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the ScoreStreams call ended"),
             &reactions);
    } else {
      auto replies = wire::ReadStreamsResponse(read_buffer_);
      read_buffer_.Clear();
      if (!replies.ok()) {
        EndAll(grpc::Status(grpc::StatusCode::DATA_LOSS, std::string(replies.status().message())),
               &reactions);
        call_.TryCancel();
      } else {
        for (wire::StreamReplyView& reply : *replies) {
          auto it = streams_.find(reply.tag);
          if (it == streams_.end() || it->second->has_status) continue;
          const std::shared_ptr<State>& s = it->second;
          if (reply.has_response) {
            // The response's bytes stay in the slices gRPC read them into.
            if (s->read_into != nullptr) {
              s->read_into->Swap(&reply.response);
              s->read_into = nullptr;
              --s->pending;
              reactions.push_back([r = s->reactor] { r->OnReadDone(true); });
            } else {
              s->unread.emplace_back().Swap(&reply.response);
            }
          } else if (reply.has_status) {
            s->has_status = true;
            s->status = grpc::Status(grpc::StatusCode(reply.code), reply.message);
            if (s->read_into != nullptr && s->unread.empty()) {
              s->read_into = nullptr;
              --s->pending;
              reactions.push_back([r = s->reactor] { r->OnReadDone(false); });
            }
            MaybeDone(s, &reactions);
          }
        }
      }
    }
  }
  for (auto& r : reactions) r();
  if (ok) call_.StartRead(&read_buffer_);
}

void ScoreStreamsCall::EndAll(const grpc::Status& status, Reactions* reactions) {
  for (const auto& [tag, s] : streams_) {
    if (s->has_status) continue;
    s->has_status = true;
    s->status = status;
    if (s->read_into != nullptr) {
      s->read_into = nullptr;
      --s->pending;
      reactions->push_back([r = s->reactor] { r->OnReadDone(false); });
    }
    MaybeDone(s, reactions);
  }
}

void ScoreStreamsCall::MaybeDone(const std::shared_ptr<State>& s, Reactions* reactions) {
  if (!s->has_status || s->pending > 0 || s->done) return;
  s->done = true;
  reactions->push_back([r = s->reactor, status = s->status] { r->OnDone(status); });
  streams_.erase(s->tag);
  changed_.notify_all();
}

grpc::Status ScoreStreamsCall::Close() {
  {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [this] { return streams_.empty() || done_; });
  }
  call_.StartWritesDone();
  std::unique_lock lock(mu_);
  changed_.wait(lock, [this] { return done_; });
  return status_;
}

void ScoreStreamsCall::OnDone(const grpc::Status& status) {
  std::lock_guard lock(mu_);
  done_ = true;
  status_ = status;
  changed_.notify_all();
}

}  // namespace gmmscore
