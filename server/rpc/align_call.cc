#include "server/rpc/align_call.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>

#include "absl/strings/str_cat.h"
#include "align/align_graph_preparation.h"
#include "align/align_utterance.h"
#include "align/careful_graph.h"
#include "formats/kaldi_fst.h"
#include "model/shape_checks.h"
#include "proto/wire_codec.h"
#include "server/rpc/stream_config.h"
#include "util/status_macros.h"

namespace gmmscore::server {
namespace {

AlignOptions OptionsOf(const v1::AlignRequest& r) {
  AlignOptions o;
  if (r.beam() != 0.0f) o.beam = r.beam();
  o.retry_beam = r.retry_beam();
  if (r.transition_scale() != 0.0f) o.transition_scale = r.transition_scale();
  if (r.self_loop_scale() != 0.0f) o.self_loop_scale = r.self_loop_scale();
  if (r.acoustic_scale() != 0.0f) o.acoustic_scale = r.acoustic_scale();
  return o;
}

// The call: a window sink for its frames' scores, finished exactly once.
class AlignCall final : public WindowSink, public std::enable_shared_from_this<AlignCall> {
 public:
  AlignCall(grpc::ServerUnaryReactor* reactor, const v1::AlignRequest* request,
            v1::AlignResponse* response, const AlignServices& services)
      : reactor_(reactor), request_(request), response_(response), services_(services) {}

  ~AlignCall() override { --*services_.in_progress; }

  // On a worker: checks the request, parses the graph, submits the frames' windows.
  void Start() {
    Guarded([this] { return Prepare(); });
  }

  void OnWindowScored(Window window, absl::StatusOr<WindowScores> scores) override {
    std::lock_guard lock(mu_);
    if (finished_) return;
    if (!scores.ok()) {
      FinishLocked(scores.status());
      return;
    }
    const MatrixView& m = scores->front();  // one model: its scores
    std::memcpy(loglikes_.row(int32_t(window.first_frame)), m.data,
                size_t(m.rows) * size_t(m.cols) * sizeof(float));
    if (--windows_left_ > 0) return;
    services_.workers->Post([self = shared_from_this()] {
      self->Guarded([&] {
        return self->services_.viterbi != nullptr ? self->SubmitToGpu() : self->Viterbi();
      });
    });
  }

 private:
  absl::Status Prepare() {
    const v1::AlignRequest& r = *request_;
    const AlignLimits& limits = *services_.limits;
    if (r.utterance_id().size() > kMaxStreamIdBytes) {
      return absl::InvalidArgumentError(absl::StrCat("utterance_id has ", r.utterance_id().size(),
                                                     " bytes, at most ", kMaxStreamIdBytes));
    }
    label_ = absl::StrCat("utterance '", r.utterance_id(), "'");
    GMM_RETURN_IF_ERROR(ValidateModelName(r.model()));
    options_ = OptionsOf(r);
    GMM_RETURN_IF_ERROR(ValidateAlignOptions(options_));
    GMM_ASSIGN_OR_RETURN(entry_, services_.registry->Acquire(r.model()));
    const GmmModel& model = entry_->model();
    if (model.hmm().empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("model '", r.model(), "' has no HMM to align with"));
    }
    if (r.dim() != model.dim()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the request says dimension ", r.dim(), ", model '", r.model(), "' has ", model.dim()));
    }
    const size_t frame_bytes = size_t(model.dim()) * sizeof(float);
    if (r.features().empty() || r.features().size() % frame_bytes != 0) {
      return absl::InvalidArgumentError(absl::StrCat("features of ", r.features().size(),
                                                     " bytes: not a whole number of ", model.dim(),
                                                     "-dimensional frames"));
    }
    const int64_t frames = int64_t(r.features().size() / frame_bytes);
    if (frames > limits.max_frames) {
      return absl::InvalidArgumentError(
          absl::StrCat(frames, " frames, more than ", limits.max_frames, " (--max-align-frames)"));
    }
    GMM_ASSIGN_OR_RETURN(graph_, ParseBinaryFst(r.graph(), "the graph"));
    if (graph_.num_arcs() > limits.max_graph_arcs) {
      return absl::InvalidArgumentError(absl::StrCat("the graph has ", graph_.num_arcs(),
                                                     " arcs, more than ", limits.max_graph_arcs,
                                                     " (--max-align-graph-arcs)"));
    }
    Matrix feats(int32_t(frames), model.dim());
    wire::ReadFloat32(r.features(), {feats.data.data(), feats.data.size()});
    GMM_RETURN_IF_ERROR(CheckFeatures(feats, model.dim()));

    loglikes_.Resize(int32_t(frames), model.num_states());
    auto set = ModelSet::Make({entry_});
    const int32_t window = std::max(1, limits.window_frames);
    {
      std::lock_guard lock(mu_);
      windows_left_ = int32_t((frames + window - 1) / window);
    }
    for (int32_t first = 0; first < frames; first += window) {
      Window w;
      w.sink = shared_from_this();
      w.first_frame = first;
      const int32_t n = std::min<int32_t>(window, int32_t(frames) - first);
      w.feats.Resize(n, model.dim());
      std::memcpy(w.feats.data.data(), feats.row(first), w.feats.data.size() * sizeof(float));
      w.ready = w.queued = Clock::now();
      services_.batcher->Submit(set, std::move(w));
    }
    return absl::OkStatus();
  }

  // Runs a step; its error, or an exception it throws (a failed allocation), finishes the call.
  template <typename Step>
  void Guarded(Step&& step) {
    absl::Status status;
    try {
      status = step();
    } catch (const std::bad_alloc&) {
      status = absl::ResourceExhaustedError("out of memory");
    } catch (const std::exception& e) {
      status = absl::InternalError(e.what());
    }
    if (!status.ok()) Finish(status);
  }

  // The GPU's exact Viterbi (ViterbiQueue), the graph readied here as the device aligner
  // (align/device_aligner.h) readies it; no beam, so never a retry.
  absl::Status SubmitToGpu() {
    const TransitionModel& tm = entry_->model().hmm();
    GMM_ASSIGN_OR_RETURN(graph_,
                         PrepareExactAlignGraph(std::move(graph_), tm, options_.transition_scale,
                                                options_.self_loop_scale));
    if (options_.careful) graph_ = MakeCarefulGraph(graph_);
    frames_ = loglikes_.rows;
    ViterbiJob job;
    job.graph = std::move(graph_);
    job.loglikes = std::move(loglikes_);
    job.model = &tm;  // the entry, which the callback's call holds, keeps it
    job.acoustic_scale = options_.acoustic_scale;
    job.done = [self = shared_from_this()](absl::StatusOr<ViterbiResult> result) {
      self->Guarded([&] { return self->RespondFromGpu(std::move(result)); });
    };
    services_.viterbi->Submit(std::move(job));
    return absl::OkStatus();
  }

  absl::Status RespondFromGpu(absl::StatusOr<ViterbiResult> result) {
    GMM_RETURN_IF_ERROR(result.status());
    if (!result->reached_final) {
      return absl::FailedPreconditionError(
          absl::StrCat("no path reached a final state, len = ", frames_));
    }
    Respond(result->transition_ids, result->score, /*retried=*/false);
    return absl::OkStatus();
  }

  absl::Status Viterbi() {
    UtteranceAlignment aligned =
        AlignUtterance(options_, entry_->model().hmm(), std::move(graph_), loglikes_);
    if (!aligned.status.ok()) {
      // No path: the transcript does not fit the audio (the request is fine, the data is not).
      return absl::Status(aligned.status.code() == absl::StatusCode::kNotFound
                              ? absl::StatusCode::kFailedPrecondition
                              : aligned.status.code(),
                          aligned.status.message());
    }
    Respond(aligned.transition_ids, aligned.score, aligned.retried);
    return absl::OkStatus();
  }

  // The alignment as the response, and the call finished. The log-likelihood is the score over
  // the acoustic scale, as Kaldi's per-frame average sums it.
  void Respond(const std::vector<int32_t>& transition_ids, float score, bool retried) {
    response_->set_utterance_id(request_->utterance_id());
    for (int32_t tid : transition_ids) response_->add_transition_ids(tid);
    response_->set_log_likelihood(score / options_.acoustic_scale);
    response_->set_score(score);
    response_->set_retried(retried);
    response_->mutable_model()->set_name(entry_->name());
    response_->mutable_model()->set_version(entry_->version());
    Finish(absl::OkStatus());
  }

  void Finish(const absl::Status& status) {
    std::lock_guard lock(mu_);
    FinishLocked(status);
  }

  void FinishLocked(const absl::Status& status) {
    if (finished_) return;
    finished_ = true;
    if (!status.ok()) {
      services_.metrics->CountFailure(
          status.code() == absl::StatusCode::kInvalidArgument ? FailureReason::kInvalidArgument
          : status.code() == absl::StatusCode::kNotFound      ? FailureReason::kUnknownModel
          : status.code() == absl::StatusCode::kUnavailable   ? FailureReason::kModelLoading
                                                              : FailureReason::kInternal);
    }
    reactor_->Finish(status.ok() ? grpc::Status::OK
                                 : grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                                                absl::StrCat(label_, ": ", status.message())));
  }

  grpc::ServerUnaryReactor* const reactor_;
  const v1::AlignRequest* const request_;
  v1::AlignResponse* const response_;
  const AlignServices services_;
  std::string label_ = "an utterance";
  AlignOptions options_;
  std::shared_ptr<ModelEntry> entry_;
  AlignGraph graph_;
  Matrix loglikes_;
  int32_t frames_ = 0;  // once the scores have gone to the GPU
  std::mutex mu_;
  int32_t windows_left_ = 0;
  bool finished_ = false;
};

}  // namespace

grpc::ServerUnaryReactor* StartAlign(grpc::CallbackServerContext* context,
                                     const v1::AlignRequest* request, v1::AlignResponse* response,
                                     const AlignServices& services) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (services.in_progress->fetch_add(1) >= services.limits->max_concurrent) {
    --*services.in_progress;
    reactor->Finish(
        grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                     absl::StrCat(services.limits->max_concurrent,
                                  " alignments in progress (--max-concurrent-alignments)")));
    return reactor;
  }
  // The call counts against the limit until it is destroyed (~AlignCall).
  std::shared_ptr<AlignCall> call;
  try {
    call = std::make_shared<AlignCall>(reactor, request, response, services);
  } catch (const std::bad_alloc&) {
    --*services.in_progress;
    reactor->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "out of memory"));
    return reactor;
  }
  services.workers->Post([call] { call->Start(); });
  return reactor;
}

}  // namespace gmmscore::server
