#include "tools/align_table_files.h"

#include <utility>

#include "util/status_macros.h"

namespace gmmscore {

absl::StatusOr<AlignTableFiles> AlignTableFiles::Open(const Specifiers& specifiers) {
  AlignTableFiles files;
  GMM_ASSIGN_OR_RETURN(files.alignments_, Int32VectorTableWriter::Open(specifiers.alignments));
  if (!specifiers.scores.empty()) {
    GMM_ASSIGN_OR_RETURN(files.scores_, FloatTableWriter::Open(specifiers.scores));
  }
  if (!specifiers.frame_loglikes.empty()) {
    GMM_ASSIGN_OR_RETURN(files.frame_loglikes_,
                         FloatVectorTableWriter::Open(specifiers.frame_loglikes));
  }
  if (!specifiers.posteriors.empty()) {
    GMM_ASSIGN_OR_RETURN(files.posteriors_, PosteriorTableWriter::Open(specifiers.posteriors));
  }
  if (!specifiers.ctm.empty()) {
    GMM_ASSIGN_OR_RETURN(files.ctm_, OutputStream::Open(specifiers.ctm));
  }
  return files;
}

AlignTableOutputs AlignTableFiles::outputs() const {
  return {alignments_.get(), scores_.get(), frame_loglikes_.get(), ctm_ ? &ctm_->stream() : nullptr,
          posteriors_.get()};
}

absl::Status AlignTableFiles::Close() {
  for (absl::Status s : {alignments_->Close(), scores_ ? scores_->Close() : absl::OkStatus(),
                         frame_loglikes_ ? frame_loglikes_->Close() : absl::OkStatus(),
                         ctm_ ? ctm_->Close() : absl::OkStatus(),
                         posteriors_ ? posteriors_->Close() : absl::OkStatus()}) {
    GMM_RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

}  // namespace gmmscore
