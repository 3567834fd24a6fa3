// Whole-utterance CMVN over a table, in input order (gmmscore compute-feats): each utterance's base
// features (ComputeBaseFeatures) wait until their CMVN statistics are complete, then are finished
// (FinishFeatures) and handed to a sink. With --cmvn=speaker the statistics are the speaker's, so
// an utterance waits for its speaker's last utterance; otherwise they are its own (or unused) and
// it is finished at once.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "feat/cmvn.h"
#include "feat/front_end_options.h"
#include "util/matrix.h"

namespace gmmscore {

class CmvnQueue {
 public:
  // Receives each finished utterance, in the order they were added.
  using Sink = std::function<absl::Status(const std::string& key, const Matrix& feats)>;

  // utt2spk: utterance to speaker, used for --cmvn=speaker only (every utterance in it is expected
  // before its speaker is complete).
  CmvnQueue(const FrontEndOptions& opts, std::map<std::string, std::string> utt2spk, Sink sink);

  // Adds an utterance; finishes and sinks every waiting utterance whose statistics are complete.
  // NotFound (nothing added) where --cmvn=speaker and utt2spk has no speaker for key; a sink's
  // or FinishFeatures' error otherwise.
  absl::Status Add(const std::string& key, Matrix base);
  // Finishes and sinks what still waits (speakers some of whose utterances never came).
  absl::Status Flush();

 private:
  struct Waiting {
    std::string key;
    std::string speaker;
    Matrix base;
  };
  absl::Status SinkReady(bool all);

  const FrontEndOptions& opts_;
  const std::map<std::string, std::string> utt2spk_;
  Sink sink_;
  std::map<std::string, int64_t> remaining_;  // per speaker: its utterances still to come
  std::map<std::string, CmvnStats> stats_;    // per speaker (per utterance: while it waits)
  std::deque<Waiting> waiting_;
};

}  // namespace gmmscore
