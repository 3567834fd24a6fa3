// Kaldi acoustic models: final.mdl = TransitionModel + AmDiagGmm, binary or text, with the token
// grammar of src/hmm/transition-model.cc, src/hmm/hmm-topology.cc, src/gmm/am-diag-gmm.cc and
// src/gmm/diag-gmm.cc. Kaldi stores each Gaussian as (weight, mean/var, 1/var) and recomputes the
// gconsts on read; so do we.
#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "formats/kaldi_io.h"
#include "model/gmm_model.h"

namespace gmmscore {

absl::StatusOr<GmmModel> ReadKaldiModel(std::istream& is, const std::string& name);
absl::Status WriteKaldiModel(const GmmModel& model, std::ostream& os, bool binary);

// Whole model files through Kaldi's extended filenames (formats/kaldi_stream.h: "-", "CMD |",
// "| CMD"), as Kaldi's tools read and write models; errors name the file.
absl::StatusOr<GmmModel> ReadKaldiModelFile(const std::string& rxfilename);
absl::Status WriteKaldiModelFile(const GmmModel& model, const std::string& wxfilename, bool binary);

// The pieces, for tools that read a TransitionModel alone (alignment graphs, etc.).
absl::StatusOr<TransitionModel> ReadKaldiTransitionModel(KaldiReader& in);
void WriteKaldiTransitionModel(const TransitionModel& tm, KaldiWriter& out);

}  // namespace gmmscore
