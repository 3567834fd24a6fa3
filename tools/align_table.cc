#include "tools/align_table.h"

#include <optional>
#include <thread>
#include <vector>

#include "align/align_graph_preparation.h"
#include "align/careful_graph.h"
#include "align/forward_backward.h"
#include "align/phone_segments.h"
#include "model/shape_checks.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// Utterances aligned in one GPU launch at most, and their frames.
constexpr size_t kBatchUtterances = 1024;
constexpr int64_t kBatchFrames = 2'000'000;

// One table's run: the counts, the outputs, and the utterances waiting for a GPU batch.
class TableAligner {
 public:
  // model: null where the transition model is not here (alignment through a server).
  TableAligner(const AlignOptions& options, const GmmModel* model, const AlignTableOutputs& out,
               const std::string& program, std::FILE* log)
      : options_(options), model_(model), out_(out), program_(program), log_(log) {}

  AlignTableSummary& summary() { return summary_; }

  void Warn(const std::string& what) { KaldiLog(log_, "WARNING", program_, what); }

  // The CPU aligner, one utterance at a time.
  absl::Status AlignOne(const std::string& key, AlignGraph graph, const Matrix& loglikes) {
    KaldiLog(log_, "LOG", program_, key);
    std::optional<AlignGraph> for_posteriors;
    if (out_.posteriors != nullptr) for_posteriors = graph;
    UtteranceAlignment aligned =
        AlignUtterance(options_, model_->hmm(), std::move(graph), loglikes);
    if (aligned.retried) Retried(key);
    if (!aligned.status.ok()) {
      Failed(key, aligned.status, loglikes.rows);
      return absl::OkStatus();
    }
    GMM_RETURN_IF_ERROR(
        Write(key, aligned.transition_ids, aligned.score, aligned.frame_loglikes, loglikes.rows));
    if (!for_posteriors) return absl::OkStatus();
    GMM_ASSIGN_OR_RETURN(const AlignGraph readied,
                         PrepareAlignGraph(*std::move(for_posteriors), model_->hmm(),
                                           options_.transition_scale, options_.self_loop_scale));
    GMM_ASSIGN_OR_RETURN(
        const ForwardBackwardResult fb,
        ForwardBackward(readied, model_->hmm(), loglikes, options_.acoustic_scale));
    return out_.posteriors->Write(key, fb.posteriors);
  }

  // The GPU: the utterance's graph readied on the host now, scored and aligned with a batch later.
  absl::Status Queue(BatchAligner* aligner, const std::string& key, AlignGraph graph,
                     Matrix feats) {
    auto readied = PrepareAlignGraph(std::move(graph), model_->hmm(), options_.transition_scale,
                                     options_.self_loop_scale);
    absl::Status ready = readied.status();
    if (ready.ok()) ready = EpsilonDepth(*readied).status();
    if (!ready.ok()) {
      Failed(key, ready, feats.rows);
      return absl::OkStatus();
    }
    graph = *std::move(readied);
    // The posteriors are over the graph as it is, as the CPU path computes them.
    std::optional<AlignGraph> for_posteriors;
    if (out_.posteriors != nullptr) for_posteriors = graph;
    if (options_.careful) graph = MakeCarefulGraph(graph);
    queued_frames_ += feats.rows;
    queue_.push_back({key, std::move(graph), std::move(feats), std::move(for_posteriors)});
    if (queue_.size() >= kBatchUtterances || queued_frames_ >= kBatchFrames) return Flush(aligner);
    return absl::OkStatus();
  }

  absl::Status Flush(BatchAligner* aligner) {
    if (queue_.empty()) return absl::OkStatus();
    std::vector<AlignInput> batch;
    for (const Queued& q : queue_) batch.push_back({&q.graph, &q.feats});
    GMM_ASSIGN_OR_RETURN(const std::vector<ViterbiResult> results,
                         aligner->Align(batch, options_.acoustic_scale));
    std::vector<AlignInput> aligned;  // for the posteriors: the utterances that aligned
    std::vector<const std::string*> aligned_keys;
    for (size_t i = 0; i < queue_.size(); ++i) {
      const Queued& q = queue_[i];
      const ViterbiResult& r = results[i];
      KaldiLog(log_, "LOG", program_, q.key);
      if (!r.reached_final) {
        Failed(q.key, absl::NotFoundError("no final state"), q.feats.rows);
        continue;
      }
      GMM_RETURN_IF_ERROR(Write(q.key, r.transition_ids, r.score, r.frame_loglikes, q.feats.rows));
      if (q.for_posteriors) {
        aligned.push_back({&*q.for_posteriors, &q.feats});
        aligned_keys.push_back(&q.key);
      }
    }
    if (!aligned.empty()) {
      GMM_ASSIGN_OR_RETURN(const std::vector<PosteriorResult> posteriors,
                           aligner->Posteriors(aligned, options_.acoustic_scale));
      for (size_t i = 0; i < aligned.size(); ++i) {
        GMM_RETURN_IF_ERROR(out_.posteriors->Write(*aligned_keys[i], posteriors[i].posteriors));
      }
    }
    queue_.clear();
    queued_frames_ = 0;
    return absl::OkStatus();
  }

  // The utterance's features, or none where the table has none or they have no frames (counted
  // as an error and warned about, as Kaldi does).
  absl::StatusOr<std::optional<Matrix>> FeaturesFor(MatrixLookup* feats, const std::string& key) {
    GMM_ASSIGN_OR_RETURN(std::optional<Matrix> features, feats->Take(key));
    if (!features) {
      ++summary_.errors;
      Warn("No features for utterance " + key);
    } else if (features->rows == 0) {
      ++summary_.errors;
      Warn("Zero-length utterance: " + key);
      features.reset();
    }
    return features;
  }

  void Retried(const std::string& key) {
    ++summary_.retried;
    Warn("Retrying utterance " + key + " with beam " + KaldiNumber(options_.retry_beam));
  }

  // A server's answer for an utterance that did not align: FAILED_PRECONDITION is no path.
  void FailedRemote(const std::string& key, const absl::Status& status) {
    ++summary_.errors;
    Warn(status.code() == absl::StatusCode::kFailedPrecondition
             ? "Did not successfully decode file " + key
             : "Utterance " + key + ": " + std::string(status.message()));
  }

  absl::Status Write(const std::string& key, const std::vector<int32_t>& transition_ids,
                     float score, const std::vector<float>& frame_loglikes, int32_t frames) {
    ++summary_.done;
    summary_.total_log_likelihood += score / options_.acoustic_scale;
    summary_.frames += frames;
    GMM_RETURN_IF_ERROR(out_.alignments->Write(key, transition_ids));
    if (out_.scores != nullptr) GMM_RETURN_IF_ERROR(out_.scores->Write(key, score));
    if (out_.frame_loglikes != nullptr) {
      GMM_RETURN_IF_ERROR(out_.frame_loglikes->Write(key, frame_loglikes));
    }
    if (out_.ctm != nullptr) {
      *out_.ctm << CtmLines(key, SplitToPhones(model_->hmm(), transition_ids));
      if (!*out_.ctm) return absl::DataLossError("writing the CTM output failed");
    }
    return absl::OkStatus();
  }

 private:
  struct Queued {
    std::string key;
    AlignGraph graph;
    Matrix feats;
    std::optional<AlignGraph> for_posteriors;  // where --posteriors is asked
  };

  void Failed(const std::string& key, const absl::Status& status, int32_t frames) {
    ++summary_.errors;
    Warn(status.code() == absl::StatusCode::kNotFound
             ? "Did not successfully decode file " + key + ", len = " + KaldiNumber(frames)
             : "Utterance " + key + ": " + std::string(status.message()));
  }

  const AlignOptions& options_;
  const GmmModel* const model_;
  const AlignTableOutputs& out_;
  const std::string& program_;
  std::FILE* const log_;
  AlignTableSummary summary_;
  std::vector<Queued> queue_;
  int64_t queued_frames_ = 0;
};

}  // namespace

absl::StatusOr<AlignTableSummary> AlignTable(const AlignOptions& options, const GmmModel& model,
                                             const FusedScorer* scorer, BatchAligner* aligner,
                                             FstTableReader* graphs, MatrixLookup* feats,
                                             const AlignTableOutputs& out,
                                             const std::string& program, std::FILE* log) {
  GMM_RETURN_IF_ERROR(ValidateAlignOptions(options));
  TableAligner table(options, &model, out, program, log);
  std::string key;
  AlignGraph graph;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, graphs->Next(&key, &graph));
    if (!more) break;
    GMM_ASSIGN_OR_RETURN(std::optional<Matrix> features, table.FeaturesFor(feats, key));
    if (!features) continue;
    if (aligner != nullptr) {
      if (absl::Status s = CheckFeatures(*features, model.dim()); !s.ok()) {
        ++table.summary().errors;
        table.Warn("Could not score utterance " + key + ": " + std::string(s.message()));
        continue;
      }
      GMM_RETURN_IF_ERROR(table.Queue(aligner, key, std::move(graph), *std::move(features)));
      continue;
    }
    Matrix loglikes;
    if (absl::Status s = scorer->Score(*features, &loglikes); !s.ok()) {
      ++table.summary().errors;
      table.Warn("Could not score utterance " + key + ": " + std::string(s.message()));
      continue;
    }
    GMM_RETURN_IF_ERROR(table.AlignOne(key, std::move(graph), loglikes));
  }
  if (aligner != nullptr) GMM_RETURN_IF_ERROR(table.Flush(aligner));
  return table.summary();
}

absl::StatusOr<AlignTableSummary> AlignTableRemote(const AlignOptions& options,
                                                   const RemoteAligner& align, int32_t parallel,
                                                   FstTableReader* graphs, MatrixLookup* feats,
                                                   const AlignTableOutputs& out,
                                                   const std::string& program, std::FILE* log) {
  GMM_RETURN_IF_ERROR(ValidateAlignOptions(options));
  TableAligner table(options, nullptr, out, program, log);
  struct Call {
    std::string key;
    Matrix features;
    std::string graph;
    absl::StatusOr<RemoteAlignment> result = absl::UnknownError("not sent");
  };
  std::vector<Call> calls;
  // Sends the calls gathered so far at once and writes their results in order.
  const auto flush = [&]() -> absl::Status {
    std::vector<std::thread> threads;
    for (Call& call : calls) {
      threads.emplace_back([&options, &align, &call] {
        call.result = align(options, call.key, call.features, std::move(call.graph));
      });
    }
    for (std::thread& t : threads) t.join();
    for (Call& call : calls) {
      KaldiLog(log, "LOG", program, call.key);
      if (!call.result.ok()) {
        table.FailedRemote(call.key, call.result.status());
        continue;
      }
      if (call.result->retried) table.Retried(call.key);
      const std::vector<int32_t>& tids = call.result->transition_ids;
      GMM_RETURN_IF_ERROR(
          table.Write(call.key, tids, call.result->score, {}, int32_t(tids.size())));
    }
    calls.clear();
    return absl::OkStatus();
  };
  std::string key, bytes;
  AlignGraph graph;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, graphs->Next(&key, &graph, &bytes));
    if (!more) break;
    GMM_ASSIGN_OR_RETURN(std::optional<Matrix> features, table.FeaturesFor(feats, key));
    if (!features) continue;
    calls.push_back(Call{key, *std::move(features), std::move(bytes)});
    if (int32_t(calls.size()) >= parallel) GMM_RETURN_IF_ERROR(flush());
  }
  GMM_RETURN_IF_ERROR(flush());
  return table.summary();
}

void LogAlignSummary(const AlignTableSummary& s, const std::string& program, std::FILE* log) {
  KaldiLog(log, "LOG", program,
           "Overall log-likelihood per frame is " +
               KaldiNumber(s.total_log_likelihood / static_cast<double>(s.frames)) + " over " +
               KaldiNumber(s.frames) + " frames.");
  KaldiLog(log, "LOG", program,
           "Retried " + KaldiNumber(s.retried) + " out of " + KaldiNumber(s.done + s.errors) +
               " utterances.");
  KaldiLog(log, "LOG", program,
           "Done " + KaldiNumber(s.done) + ", errors on " + KaldiNumber(s.errors));
}

}  // namespace gmmscore
