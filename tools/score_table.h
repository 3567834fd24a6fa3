// Scoring a table of utterances with one scorer per device (gmmscore score --devices): every
// device scores an utterance at a time, and the scores are written in the table's order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "formats/matrix_table.h"
#include "kernels/fused_scorer.h"

namespace gmmscore {

// Reads every utterance, scores it on one of scorers (a thread each when there are several,
// with at most two utterances per scorer read ahead) and writes the scores in input order,
// calling written(frames) after each. The first error stops it, naming the utterance.
absl::Status ScoreTable(MatrixTableReader* reader, MatrixTableWriter* writer,
                        const std::vector<std::unique_ptr<FusedScorer>>& scorers,
                        const std::function<void(int64_t frames)>& written);

}  // namespace gmmscore
