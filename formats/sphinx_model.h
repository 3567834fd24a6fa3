// CMU Sphinx 3 / PocketSphinx continuous acoustic models: a directory with the s3 binary files
// means, variances, mixture_weights and transition_matrices and the text model definition mdef
// (format 0.3), as SphinxTrain writes them.
//
// Only fully continuous single-stream models map onto the canonical model (one codebook per
// senone); semi-continuous, phonetically tied (PTM) and multi-stream models are rejected. Senones
// become the canonical states in senone order. Each mdef phone row becomes a phone (1-based, in
// file order) whose topology is its transition matrix: one topology entry per matrix, states
// 0..S-1 emitting (pdf class k) and state S final. Mixture weights and transition rows are
// normalised, as the Sphinx decoders do; rows that already sum to 1 are kept bit for bit.
//
// The writer writes the same five files (s3 with checksum, little-endian). A model read from
// Sphinx gets its phones and matrices back; any other model gets one base phone per state with a
// single-state matrix. States with fewer Gaussians than the largest are padded with weight-0
// copies of their first Gaussian, which leaves every score unchanged.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "model/gmm_model.h"

namespace gmmscore {

absl::StatusOr<GmmModel> ReadSphinxModel(const std::string& dir);
absl::Status WriteSphinxModel(const GmmModel& model, const std::string& dir);

}  // namespace gmmscore
