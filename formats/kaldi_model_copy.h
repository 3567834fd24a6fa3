// Kaldi model files read into and written from Kaldi's own parameters (model/kaldi_stored_model.h),
// the gconsts recomputed as Kaldi's DiagGmm::ComputeGconsts computes them: written back (text reals
// as Kaldi prints them), the bytes are Kaldi's.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "model/kaldi_stored_model.h"

namespace gmmscore {

// Reads a model file (any rxfilename, binary or text) as gmm-copy does: the transition model
// where `transitions`, then the AmDiagGmm where `gmms` (either alone is read from the file's
// start). Errors name the file and the byte.
absl::StatusOr<KaldiStoredModel> ReadKaldiStoredModel(const std::string& rxfilename,
                                                      bool transitions, bool gmms);
// Writes what was read, binary or text, to a wxfilename.
absl::Status WriteKaldiStoredModel(const KaldiStoredModel& model, const std::string& wxfilename,
                                   bool binary);

}  // namespace gmmscore
