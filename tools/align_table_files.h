// The output tables of an alignment run (gmm-align-compiled's ALIGNMENTS-WSPEC and
// SCORES-WSPEC, and gmmscore's --write-per-frame-acoustic-loglikes, --posteriors and --ctm),
// opened from their specifiers before any work and closed together after it, so that an output
// that cannot be written fails the command before anything is aligned or at the end, never in
// the middle with others half-written.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "formats/kaldi_stream.h"
#include "formats/kaldi_tables.h"
#include "tools/align_table.h"

namespace gmmscore {

class AlignTableFiles {
 public:
  // Empty specifiers are outputs not asked for; alignments is required.
  struct Specifiers {
    std::string alignments;
    std::string scores;
    std::string frame_loglikes;
    std::string posteriors;
    std::string ctm;  // a wxfilename
  };
  static absl::StatusOr<AlignTableFiles> Open(const Specifiers& specifiers);

  AlignTableOutputs outputs() const;
  // Closes every table; the first error.
  absl::Status Close();

 private:
  std::unique_ptr<Int32VectorTableWriter> alignments_;
  std::unique_ptr<FloatTableWriter> scores_;
  std::unique_ptr<FloatVectorTableWriter> frame_loglikes_;
  std::unique_ptr<PosteriorTableWriter> posteriors_;
  std::unique_ptr<OutputStream> ctm_;
};

}  // namespace gmmscore
