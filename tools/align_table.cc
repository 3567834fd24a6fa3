#include "tools/align_table.h"

#include <optional>
#include <vector>

#include "align/beam_aligner.h"
#include "align/device_aligner.h"
#include "align/phone_segments.h"
#include "model/shape_checks.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

// One table's run: the counts, the outputs, and the utterances waiting for the aligner's batch.
class TableAligner {
 public:
  TableAligner(const AlignOptions& options, Aligner& aligner, const GmmModel* model,
               const AlignTableOutputs& out, const std::string& program, std::FILE* log)
      : options_(options),
        aligner_(aligner),
        limits_(aligner.batch_limits()),
        model_(model),
        out_(out),
        program_(program),
        log_(log) {}

  AlignTableSummary& summary() { return summary_; }

  // The utterance's features, or none where the table has none, they have no frames, or they do
  // not fit the model (counted as an error and warned about, as Kaldi does).
  absl::StatusOr<std::optional<Matrix>> FeaturesFor(MatrixLookup* feats, const std::string& key) {
    GMM_ASSIGN_OR_RETURN(std::optional<Matrix> features, feats->Take(key));
    if (!features) {
      Error("No features for utterance " + key);
    } else if (features->rows == 0) {
      Error("Zero-length utterance: " + key);
      features.reset();
    } else if (model_ != nullptr) {
      if (absl::Status s = CheckFeatures(*features, model_->dim()); !s.ok()) {
        Error("Could not score utterance " + key + ": " + std::string(s.message()));
        features.reset();
      }
    }
    return features;
  }

  // Queues the utterance; aligns the queue when it holds a batch.
  absl::Status Queue(const std::string& key, AlignGraph graph, Matrix feats) {
    queued_frames_ += feats.rows;
    queue_.push_back({key, std::move(graph), std::move(feats)});
    const bool full = int64_t(queue_.size()) >= limits_.utterances ||
                      (limits_.frames > 0 && queued_frames_ >= limits_.frames);
    return full ? Flush() : absl::OkStatus();
  }

  absl::Status Flush() {
    if (queue_.empty()) return absl::OkStatus();
    std::vector<UtteranceToAlign> batch;
    batch.reserve(queue_.size());
    for (const Queued& q : queue_) batch.push_back({q.key, &q.graph, &q.feats});
    GMM_ASSIGN_OR_RETURN(const std::vector<UtteranceAlignment> results,
                         aligner_.Align(batch, out_.posteriors != nullptr));
    for (size_t i = 0; i < queue_.size(); ++i) {
      GMM_RETURN_IF_ERROR(Report(queue_[i].key, queue_[i].feats.rows, results[i]));
    }
    queue_.clear();
    queued_frames_ = 0;
    return absl::OkStatus();
  }

 private:
  struct Queued {
    std::string key;
    AlignGraph graph;
    Matrix feats;
  };

  void Warn(const std::string& what) { KaldiLog(log_, "WARNING", program_, what); }

  void Error(const std::string& what) {
    ++summary_.errors;
    Warn(what);
  }

  // The log lines of an aligned utterance, and its outputs where it aligned.
  absl::Status Report(const std::string& key, int32_t frames, const UtteranceAlignment& aligned) {
    KaldiLog(log_, "LOG", program_, key);
    if (aligned.retried) {
      ++summary_.retried;
      Warn("Retrying utterance " + key + " with beam " + KaldiNumber(options_.retry_beam));
    }
    if (!aligned.status.ok()) {
      Error(aligned.status.code() == absl::StatusCode::kNotFound
                ? "Did not successfully decode file " + key + ", len = " + KaldiNumber(frames)
                : "Utterance " + key + ": " + std::string(aligned.status.message()));
      return absl::OkStatus();
    }
    ++summary_.done;
    summary_.total_log_likelihood += aligned.log_likelihood;
    summary_.frames += frames;
    GMM_RETURN_IF_ERROR(out_.alignments->Write(key, aligned.transition_ids));
    if (out_.scores != nullptr) GMM_RETURN_IF_ERROR(out_.scores->Write(key, aligned.score));
    if (out_.frame_loglikes != nullptr) {
      GMM_RETURN_IF_ERROR(out_.frame_loglikes->Write(key, aligned.frame_loglikes));
    }
    if (out_.posteriors != nullptr) {
      GMM_RETURN_IF_ERROR(out_.posteriors->Write(key, aligned.posteriors));
    }
    if (out_.ctm != nullptr) {
      *out_.ctm << CtmLines(key, SplitToPhones(model_->hmm(), aligned.transition_ids));
      if (!*out_.ctm) return absl::DataLossError("writing the CTM output failed");
    }
    return absl::OkStatus();
  }

  const AlignOptions& options_;
  Aligner& aligner_;
  const AlignerBatchLimits limits_;
  const GmmModel* const model_;
  const AlignTableOutputs& out_;
  const std::string& program_;
  std::FILE* const log_;
  AlignTableSummary summary_;
  std::vector<Queued> queue_;
  int64_t queued_frames_ = 0;
};

}  // namespace

std::unique_ptr<Aligner> MakeAligner(const AlignOptions& options, const GmmModel& model,
                                     AlignBackend& backend) {
  if (backend.aligner != nullptr) {
    return std::make_unique<DeviceAligner>(options, model.hmm(), *backend.aligner);
  }
  return std::make_unique<BeamAligner>(options, model.hmm(), *backend.scorer);
}

absl::StatusOr<AlignTableSummary> AlignTable(const AlignOptions& options, Aligner& aligner,
                                             const GmmModel* model, FstTableReader* graphs,
                                             MatrixLookup* feats, const AlignTableOutputs& out,
                                             const std::string& program, std::FILE* log) {
  GMM_RETURN_IF_ERROR(ValidateAlignOptions(options));
  if (model == nullptr && (out.ctm != nullptr || out.posteriors != nullptr)) {
    return absl::InvalidArgumentError("a CTM or posteriors need the model here");
  }
  TableAligner table(options, aligner, model, out, program, log);
  std::string key;
  AlignGraph graph;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, graphs->Next(&key, &graph));
    if (!more) break;
    GMM_ASSIGN_OR_RETURN(std::optional<Matrix> features, table.FeaturesFor(feats, key));
    if (!features) continue;
    GMM_RETURN_IF_ERROR(table.Queue(key, std::move(graph), *std::move(features)));
  }
  GMM_RETURN_IF_ERROR(table.Flush());
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
