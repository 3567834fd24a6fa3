// Kaldi's accumulator files, binary and text, as gmm-acc-stats-ali writes them and gmm-sum-accs
// and gmm-est read them (src/gmmbin/gmm-acc-stats-ali.cc, src/gmm/mle-am-diag-gmm.cc,
// src/gmm/mle-diag-gmm.cc):
//
//   transition counts    Vector<double>: "DV" + length + doubles (text " [ c0 c1 ... ]")
//   <NUMPDFS> N          then N times one GMM's statistics:
//     <GMMACCS> <VECSIZE> dim <NUMCOMPONENTS> G <FLAGS> flags (uint16)
//     <OCCUPANCY> vector [G]  <MEANACCS> matrix [G x dim]  <DIAGVARACCS> matrix [G x dim]
//     </GMMACCS>
//   <total_like> double <total_frames> double      (absent in files of old Kaldi versions)
//
// Kaldi keeps the statistics in double and writes them as float ("FV", "FM"); so do we, so that
// our files are Kaldi's byte for byte. Either precision is read. A single GMM's statistics
// (gmm-global-acc-stats) are one <GMMACCS> block alone.
//
// Every count is checked against the bytes left before anything is sized (formats/read_limits.h),
// every value must be finite, and errors name the input, the byte and the pdf.
#pragma once

#include <istream>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "formats/kaldi_io.h"
#include "model/gmm_stats.h"

namespace gmmscore {

// One accumulator stream whose binary marker (if any) has been consumed by the caller.
absl::StatusOr<ModelStats> ReadKaldiModelStats(KaldiReader& in);
void WriteKaldiModelStats(const ModelStats& stats, KaldiWriter& out);

// A single GMM's statistics (one <GMMACCS> block): the result has one pdf.
absl::StatusOr<GmmStats> ReadKaldiDiagGmmStats(KaldiReader& in);
void WriteKaldiDiagGmmStats(const GmmStats& stats, int32_t pdf, KaldiWriter& out);

// Whole files through Kaldi's extended filenames (formats/kaldi_stream.h: "-", pipes, offsets);
// binary or text detected on reading.
absl::StatusOr<ModelStats> ReadModelStatsFile(const std::string& rxfilename);
absl::Status WriteModelStatsFile(const ModelStats& stats, const std::string& wxfilename,
                                 bool binary);

}  // namespace gmmscore
