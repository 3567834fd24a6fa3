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
// The TransitionModel at the start of a model file (or of a file holding it alone), as Kaldi's
// tools that need no GMMs read it (compile-train-graphs, show-alignments, ali-to-phones).
absl::StatusOr<TransitionModel> ReadKaldiTransitionModelFile(const std::string& rxfilename);
absl::Status WriteKaldiModelFile(const GmmModel& model, const std::string& wxfilename, bool binary);

// The pieces, for tools that read a TransitionModel alone (alignment graphs, etc.).
absl::StatusOr<TransitionModel> ReadKaldiTransitionModel(KaldiReader& in);
void WriteKaldiTransitionModel(const TransitionModel& tm, KaldiWriter& out);
// The AmDiagGmm alone (<DIMENSION>, <NUMPDFS>, then each pdf's <DiagGMM>), as a model file holds
// it after the transition model and gmm-adapt-map's tables hold it on its own. The reader's spec
// has no HMM and is not yet validated (GmmModel::Create).
absl::StatusOr<GmmModelSpec> ReadKaldiAmDiagGmm(KaldiReader& in);
void WriteKaldiAmDiagGmm(const GmmModel& model, KaldiWriter& out);
// One pdf's GMM as a Kaldi DiagGmm object (<DiagGMM> ... </DiagGMM>).
void WriteKaldiDiagGmm(const GmmModel& model, int32_t pdf, KaldiWriter& out);

// Files of a single Kaldi DiagGmm (gmm-global-init-from-feats, gmm-global-est): a model of one
// state without HMM, read and written through extended filenames.
absl::StatusOr<GmmModel> ReadKaldiDiagGmmFile(const std::string& rxfilename);
absl::Status WriteKaldiDiagGmmFile(const GmmModel& model, const std::string& wxfilename,
                                   bool binary);

}  // namespace gmmscore
