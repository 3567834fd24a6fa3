// Kaldi's gmm-init-mono (run under that name): the monophone model and tree that
// steps/train_mono.sh starts from, byte for byte what Kaldi writes (train/mono_init.h).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "formats/kaldi_model_copy.h"
#include "formats/kaldi_phone_sets.h"
#include "formats/kaldi_topology.h"
#include "formats/kaldi_tree.h"
#include "formats/matrix_table.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "train/mono_init.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmm-init-mono";

// Every frame of a feature table.
absl::StatusOr<GlobalGaussian> FeatureGaussian(const std::string& rspecifier, int32_t dim) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<MatrixTableReader> reader,
                       MatrixTableReader::Open(rspecifier));
  GlobalStats stats(dim);
  std::string key;
  Matrix feats;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, reader->Next(&key, &feats));
    if (!more) break;
    if (absl::Status s = stats.Add(feats); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": ", s.message()));
    }
  }
  return stats.Gaussian();
}

// The model as Kaldi stores it: the gconsts recomputed as Kaldi's DiagGmm::ComputeGconsts.
absl::StatusOr<KaldiStoredModel> StoredModel(const MonophoneInit& init) {
  KaldiStoredModel model{.hmm = init.hmm, .has_gmms = true, .dim = init.inv_vars.cols};
  for (int32_t pdf = 0; pdf < init.inv_vars.rows; ++pdf) {
    KaldiStoredGmm gmm{
        .weights = {1.0f}, .means_invvars = Matrix(1, model.dim), .inv_vars = Matrix(1, model.dim)};
    std::copy_n(init.means_invvars.row(pdf), model.dim, gmm.means_invvars.data.begin());
    std::copy_n(init.inv_vars.row(pdf), model.dim, gmm.inv_vars.data.begin());
    GMM_ASSIGN_OR_RETURN(gmm.gconsts, KaldiGconsts(gmm.weights, gmm.means_invvars, gmm.inv_vars));
    model.pdfs.push_back(std::move(gmm));
  }
  return model;
}

// gmm-init-mono's options.
struct Options {
  bool binary = true;
  std::string train_feats;    // rspecifier; empty: UnitGaussian(dim)
  std::string shared_phones;  // rxfilename; empty: no pdfs shared
  float perturb_factor = 0.0f;
};

absl::Status InitMono(const Options& options, const std::vector<std::string>& pos) {
  int32_t dim = 0;
  if (!absl::SimpleAtoi(pos[1], &dim) || dim <= 0 || dim >= 10000) {
    return absl::InvalidArgumentError(
        absl::StrCat("the dimension must be an integer from 1 to 9999, not '", pos[1], "'"));
  }
  GlobalGaussian gaussian = UnitGaussian(dim);
  if (!options.train_feats.empty()) {
    GMM_ASSIGN_OR_RETURN(gaussian, FeatureGaussian(options.train_feats, dim));
  }
  std::vector<std::string> warnings;
  GMM_ASSIGN_OR_RETURN(const HmmTopology topology, ReadKaldiTopologyFile(pos[0], &warnings));
  std::vector<std::vector<int32_t>> shared_sets;
  if (!options.shared_phones.empty()) {
    GMM_ASSIGN_OR_RETURN(shared_sets, ReadPhoneSetsFile(options.shared_phones));
  }
  auto init = InitMonophone(topology, shared_sets, gaussian, options.perturb_factor, &warnings);
  for (const std::string& warning : warnings) KaldiLog(stderr, "WARNING", kProgram, warning);
  if (!init.ok()) return init.status();
  GMM_ASSIGN_OR_RETURN(const KaldiStoredModel model, StoredModel(*init));
  GMM_RETURN_IF_ERROR(WriteKaldiStoredModel(model, pos[2], options.binary));
  return WriteKaldiTreeFile(init->tree, pos[3], options.binary);
}

}  // namespace

int RunGmmInitMono(int argc, char** argv) {
  Args args(kProgram,
            "[options] <topology-in> <dim> <model-out> <tree-out>\n"
            "Initialize monophone GMM (Kaldi's gmm-init-mono): one Gaussian per pdf, at the\n"
            "training features' global mean and variance (mean 1, variance 1 without them).\n"
            "e.g.: gmm-init-mono topo 39 mono.mdl mono.tree");
  Options options;
  args.Register("binary", &options.binary, "Write output in binary mode")
      .Register("train-feats", &options.train_feats,
                "rspecifier for training features [used to set mean and variance]")
      .Register("shared-phones", &options.shared_phones,
                "rxfilename containing, on each line, a list of phones whose pdfs should be "
                "shared.")
      .Register("perturb-factor", &options.perturb_factor,
                "Perturb the means using this fraction of standard deviation.");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (args.positional().size() != 4) return Usage(args);
  if (absl::Status s = InitMono(options, args.positional()); !s.ok()) return Fail(kProgram, s);
  return 0;
}

}  // namespace gmmscore
