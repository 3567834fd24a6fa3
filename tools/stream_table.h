// Scoring a table of utterances through a gmmscored (`gmmscore stream`): each utterance one Score
// stream, `parallel` in flight at once, the scores written in the table's order, so that the
// output is the bytes `gmmscore score` writes for the same models and features.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>

#include "absl/status/statusor.h"
#include "client/scorer_client.h"
#include "feat/wave_reader.h"
#include "formats/matrix_table.h"

namespace gmmscore {

struct StreamTableOptions {
  int32_t chunk_frames = 100;  // frames per message sent
  int32_t parallel = 4;        // utterances streamed at once
};

// The utterances: features (config without audio), or waves for the server's front end (config
// with its audio front end set; the first channel sent as 16-bit samples).
struct StreamTableInput {
  MatrixTableReader* features = nullptr;
  WaveTableReader* waves = nullptr;
};

struct StreamTableSummary {
  int64_t utterances = 0;
  int64_t frames = 0;
  double seconds = 0.0;
};

// Streams every utterance of input with config (its stream_id set to each key) through channel
// and writes its scores to writer. Progress every 2 s to progress where not null (one line
// redrawn on a terminal). The first error stops it, naming the utterance.
absl::StatusOr<StreamTableSummary> StreamTable(const std::shared_ptr<grpc::Channel>& channel,
                                               const v1::StreamConfig& config,
                                               const StreamTableOptions& options,
                                               StreamTableInput input, MatrixTableWriter* writer,
                                               std::FILE* progress);

}  // namespace gmmscore
