// Kaldi's compute-cmvn-stats and apply-cmvn (run under those names): cepstral mean and variance
// statistics per utterance, per speaker (--spk2utt) or global, and their application
// (feat/cmvn.h does the arithmetic, to Kaldi's bit). steps/compute_cmvn_stats.sh and every
// training script's feature pipeline run them.
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "feat/cmvn.h"
#include "formats/double_matrix_table.h"
#include "formats/kaldi_tables.h"
#include "formats/matrix_lookup.h"
#include "formats/matrix_table.h"
#include "formats/table_specifier.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

void Log(const char* program, const std::string& what) { KaldiLog(stderr, "LOG", program, what); }
void Warn(const char* program, const std::string& what) {
  KaldiLog(stderr, "WARNING", program, what);
}

DoubleMatrix StatsMatrix(const CmvnStats& stats) {
  DoubleMatrix m(2, static_cast<int32_t>(stats.sum.size()) + 1);
  m.data = stats.KaldiRows();
  return m;
}

struct Counts {
  int64_t done = 0;
  int64_t errors = 0;
};

constexpr char kComputeProgram[] = "compute-cmvn-stats";

// Per speaker: the statistics of each speaker's utterances, in spk2utt's order.
absl::Status StatsPerSpeaker(const std::string& spk2utt, const std::string& feats,
                             const std::string& wspecifier, Counts* counts) {
  GMM_ASSIGN_OR_RETURN(MatrixLookup lookup, MatrixLookup::Open(feats));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<DoubleMatrixTableWriter> writer,
                       DoubleMatrixTableWriter::Open(wspecifier));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<TokenVectorTableReader> order,
                       TokenVectorTableReader::Open(spk2utt));
  std::string speaker;
  std::vector<std::string> utterances;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, order->Next(&speaker, &utterances));
    if (!more) break;
    std::optional<CmvnStats> stats;
    for (const std::string& utt : utterances) {
      GMM_ASSIGN_OR_RETURN(std::optional<Matrix> m, lookup.Take(utt));
      if (!m.has_value()) {
        Warn(kComputeProgram, "Did not find features for utterance " + utt);
        ++counts->errors;
        continue;
      }
      if (!stats.has_value()) stats.emplace(m->cols);
      if (size_t(m->cols) != stats->sum.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("utterance ", utt, ": features have dimension ", m->cols,
                         ", the speaker's first ", stats->sum.size()));
      }
      stats->AddFrames(*m);
      ++counts->done;
    }
    if (!stats.has_value()) {
      Warn(kComputeProgram, "No stats accumulated for speaker " + speaker);
      continue;
    }
    GMM_RETURN_IF_ERROR(writer->Write(speaker, StatsMatrix(*stats)));
  }
  return writer->Close();
}

absl::Status StatsPerUtterance(const std::string& feats, const std::string& wspecifier,
                               Counts* counts) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader, MatrixTableReader::Open(feats));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<DoubleMatrixTableWriter> writer,
                       DoubleMatrixTableWriter::Open(wspecifier));
  std::string key;
  Matrix m;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &m));
    if (!more) return writer->Close();
    CmvnStats stats(m.cols);
    stats.AddFrames(m);
    GMM_RETURN_IF_ERROR(writer->Write(key, StatsMatrix(stats)));
    ++counts->done;
  }
}

// Global statistics, written as Kaldi writes them: a float matrix.
absl::Status GlobalStats(const std::string& feats, const std::string& wxfilename, bool binary,
                         Counts* counts) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader, MatrixTableReader::Open(feats));
  std::optional<CmvnStats> stats;
  std::string key;
  Matrix m;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &m));
    if (!more) break;
    if (!stats.has_value()) stats.emplace(m.cols);
    if (size_t(m.cols) != stats->sum.size()) {
      return absl::InvalidArgumentError(absl::StrCat("utterance ", key,
                                                     ": features have dimension ", m.cols,
                                                     ", the first ", stats->sum.size()));
    }
    stats->AddFrames(m);
    ++counts->done;
  }
  // A Matrix<double>, as Kaldi writes it: a float matrix would round the sums.
  DoubleMatrix out;
  if (stats.has_value()) {
    out = DoubleMatrix(2, static_cast<int32_t>(stats->sum.size()) + 1);
    out.data = stats->KaldiRows();
  }
  GMM_RETURN_IF_ERROR(WriteDoubleMatrixFile(out, wxfilename, binary));
  Log(kComputeProgram, "Wrote global CMVN stats to " + wxfilename);
  return absl::OkStatus();
}

constexpr char kApplyProgram[] = "apply-cmvn";

// apply-cmvn --norm-means=false: the features as they are.
absl::Status Copy(const std::string& in, const std::string& out, Counts* counts) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader, MatrixTableReader::Open(in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer, MatrixTableWriter::Open(out));
  std::string key;
  Matrix m;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &m));
    if (!more) return writer->Close();
    GMM_RETURN_IF_ERROR(writer->Write(key, m));
    ++counts->done;
  }
}

absl::StatusOr<std::vector<int32_t>> ParseDims(const std::string& list) {
  std::vector<int32_t> dims;
  if (list.empty()) return dims;
  for (const absl::string_view part : absl::StrSplit(list, ':')) {
    int32_t d = 0;
    if (!absl::SimpleAtoi(part, &d)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Bad --skip-dims option '", list, "' (should be colon-separated list of integers)"));
    }
    dims.push_back(d);
  }
  return dims;
}

struct ApplyOptions {
  std::string utt2spk;
  bool norm_vars = false;
  bool reverse = false;
  std::vector<int32_t> skip_dims;
};

absl::StatusOr<CmvnStats> Prepared(const DoubleMatrix& m, const ApplyOptions& opts) {
  GMM_ASSIGN_OR_RETURN(CmvnStats stats,
                       CmvnStats::FromKaldiRows(m.rows, m.cols, m.data, opts.norm_vars));
  GMM_RETURN_IF_ERROR(stats.SkipDims(opts.skip_dims));
  return stats;
}

absl::Status Apply(const std::string& stats_in, const std::string& feats_in,
                   const std::string& feats_out, const ApplyOptions& opts, Counts* counts) {
  // Statistics by key (speaker through --utt2spk, or utterance), or one global matrix.
  std::map<std::string, DoubleMatrix> by_key;
  std::optional<CmvnStats> global;
  std::map<std::string, std::string> utt2spk;
  if (IsTableSpecifier(stats_in)) {
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<DoubleMatrixTableReader> reader,
                         DoubleMatrixTableReader::Open(stats_in));
    std::string key;
    DoubleMatrix m;
    while (true) {
      GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &m));
      if (!more) break;
      by_key[key] = std::move(m);
    }
    if (!opts.utt2spk.empty()) {
      GMM_ASSIGN_OR_RETURN(utt2spk, ReadTokenMap(opts.utt2spk));
    }
  } else {
    if (!opts.utt2spk.empty()) {
      return absl::InvalidArgumentError(
          "--utt2spk option not compatible with rxfilename as input (did you forget ark:?)");
    }
    GMM_ASSIGN_OR_RETURN(const DoubleMatrix m, ReadDoubleMatrixFile(stats_in));
    GMM_ASSIGN_OR_RETURN(global, Prepared(m, opts));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader,
                       MatrixTableReader::Open(feats_in));
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableWriter> writer,
                       MatrixTableWriter::Open(feats_out));
  std::string utt;
  Matrix feats;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&utt, &feats));
    if (!more) break;
    std::optional<CmvnStats> stats = global;
    if (!global.has_value()) {
      std::string key = utt;
      if (!opts.utt2spk.empty()) {
        const auto it = utt2spk.find(utt);
        key = it == utt2spk.end() ? "" : it->second;
      }
      const auto found = by_key.find(key);
      if (key.empty() || found == by_key.end()) {
        Warn(kApplyProgram, "No normalization statistics available for key " + utt +
                                ", producing no output for this utterance");
        ++counts->errors;
        continue;
      }
      GMM_ASSIGN_OR_RETURN(stats, Prepared(found->second, opts));
    }
    if (size_t(feats.cols) != stats->sum.size()) {
      return absl::InvalidArgumentError(absl::StrCat("utterance ", utt, ": Dim mismatch: cmvn ",
                                                     stats->sum.size() + 1, ", feats ", feats.rows,
                                                     "x", feats.cols));
    }
    if (opts.reverse) {
      ApplyCmvnReverse(*stats, opts.norm_vars, &feats);
    } else {
      ApplyCmvn(*stats, opts.norm_vars, &feats);
    }
    GMM_RETURN_IF_ERROR(writer->Write(utt, feats));
    ++counts->done;
  }
  return writer->Close();
}

}  // namespace

int RunComputeCmvnStats(int argc, char** argv) {
  Args args(kComputeProgram,
            "[options] FEATS-RSPECIFIER (STATS-WSPECIFIER|STATS-WXFILENAME)\n"
            "Computes cepstral mean and variance normalization statistics: per utterance to a\n"
            "table, per speaker with --spk2utt, or global to a file.\n"
            "e.g.: compute-cmvn-stats --spk2utt=ark:data/train/spk2utt scp:data/train/feats.scp "
            "ark,scp:cmvn.ark,cmvn.scp");
  std::string spk2utt;
  bool binary = true;
  args.Register("spk2utt", &spk2utt, "speaker to utterance-list map")
      .Register("binary", &binary, "write in binary mode (applies only to global CMN/CVN)");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  Counts counts;
  absl::Status s;
  if (IsTableSpecifier(pos[1])) {
    s = spk2utt.empty() ? StatsPerUtterance(pos[0], pos[1], &counts)
                        : StatsPerSpeaker(spk2utt, pos[0], pos[1], &counts);
  } else if (!spk2utt.empty()) {
    s = absl::InvalidArgumentError(
        "--spk2utt option not compatible with wxfilename as output (did you forget ark:?)");
  } else {
    s = GlobalStats(pos[0], pos[1], binary, &counts);
  }
  if (!s.ok()) return Fail(kComputeProgram, s);
  Log(kComputeProgram, absl::StrCat("Done accumulating CMVN stats for ", counts.done,
                                    " utterances; ", counts.errors, " had errors."));
  return counts.done != 0 ? 0 : 1;
}

int RunApplyCmvn(int argc, char** argv) {
  Args args(kApplyProgram,
            "[options] (CMVN-STATS-RSPECIFIER|CMVN-STATS-RXFILENAME) FEATS-RSPECIFIER "
            "FEATS-WSPECIFIER\n"
            "Applies cepstral mean (and optionally variance) normalization, per utterance by\n"
            "default, per speaker with --utt2spk, or global if the statistics are a file.\n"
            "e.g.: apply-cmvn --utt2spk=ark:data/train/utt2spk scp:data/train/cmvn.scp "
            "scp:data/train/feats.scp ark:-");
  ApplyOptions opts;
  bool norm_means = true;
  std::string skip_dims;
  args.Register("utt2spk", &opts.utt2spk, "utterance to speaker map")
      .Register("norm-vars", &opts.norm_vars, "normalize variances")
      .Register("norm-means", &norm_means, "normalize means (false: copy the features)")
      .Register("skip-dims", &skip_dims, "dimensions to leave unnormalized, e.g. 13:14:15")
      .Register("reverse", &opts.reverse,
                "apply CMVN in the reverse sense: zero-mean, unit-variance input made into data "
                "with the statistics' mean and variance");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  if (opts.norm_vars && !norm_means) {
    return Fail(kApplyProgram,
                absl::InvalidArgumentError("You cannot normalize the variance but not the mean."));
  }
  auto dims = ParseDims(skip_dims);
  if (!dims.ok()) return Fail(kApplyProgram, dims.status());
  opts.skip_dims = *std::move(dims);
  Counts counts;
  if (!norm_means) {
    if (absl::Status s = Copy(pos[1], pos[2], &counts); !s.ok()) {
      return Fail(kApplyProgram, s);
    }
    Log(kApplyProgram, absl::StrCat("Copied ", counts.done, " utterances."));
    return counts.done != 0 ? 0 : 1;
  }
  if (absl::Status s = Apply(pos[0], pos[1], pos[2], opts, &counts); !s.ok()) {
    return Fail(kApplyProgram, s);
  }
  Log(kApplyProgram,
      absl::StrCat(opts.norm_vars ? "Applied cepstral mean and variance normalization to "
                                  : "Applied cepstral mean normalization to ",
                   counts.done, " utterances, errors on ", counts.errors));
  return counts.done != 0 ? 0 : 1;
}

}  // namespace gmmscore
