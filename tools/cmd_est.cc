// gmmscore est: Kaldi's gmm-est: maximum-likelihood re-estimation of a model from its
// statistics (transitions, then the GMMs, then mixing down and up), with gmm-est's arguments,
// options, defaults, log lines and exit status.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "formats/kaldi_accs.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_model_copy.h"
#include "formats/kaldi_stream.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "tools/kaldi_mix_log.h"
#include "train/kaldi_estimation.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore est";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }
void Warn(const std::string& what) { KaldiLog(stderr, "WARNING", kProgram, what); }

// A vector as Kaldi's WriteKaldiObject writes one in text: " [ a b c ]\n".
absl::Status WriteOccupancies(const std::vector<float>& occs, const std::string& wxfilename) {
  auto output = OutputStream::Open(wxfilename);
  if (!output.ok()) return output.status();
  KaldiWriter writer((*output)->stream(), /*binary=*/false);
  writer.FloatVector(occs.data(), occs.size());
  return (*output)->Close();
}

// gmm-est's three lines on the transition update. Kaldi keeps both sums in float and divides in
// float.
void LogTransitionUpdate(const TransitionUpdateSummary& tsum, const TransitionModel& updated) {
  const float per_frame =
      static_cast<float>(tsum.objective_change) / static_cast<float>(tsum.count);
  Log("TransitionModel::Update, objf change is " + KaldiNumber(per_frame) + " per frame over " +
      KaldiNumber(tsum.count) + " frames. ");
  Log(KaldiNumber(tsum.floored) + " probabilities floored, " + KaldiNumber(tsum.skipped) +
      " out of " + KaldiNumber(updated.NumTransitionStates()) +
      " transition-states skipped due to insuffient data (it is normal to have some "
      "skipped.)");
  Log("Transition model update: Overall " + KaldiNumber(per_frame) +
      " log-like improvement per frame over " + KaldiNumber(tsum.count) + " frames.");
}

}  // namespace

int RunEst(int argc, char** argv) {
  Args args("est",
            "[options] MODEL-IN STATS-IN MODEL-OUT\n"
            "Maximum-likelihood re-estimation of a GMM-based acoustic model (Kaldi's gmm-est).\n"
            "e.g.: gmmscore est 1.mdl 1.acc 2.mdl");
  // Each option bound to the field that holds its default (train/*.h).
  KaldiEstimationOptions est;
  MleOptions& mle = est.mle;
  MixUpOptions& up = est.up;
  MixDownOptions& down = est.down;  // its power and min-count are the same options as mixing up's
  bool binary = true;
  std::string update_flags = "mvwt";
  std::string write_occs;  // wxfilename; empty: none
  args.Register("binary", &binary, "write output in binary mode")
      .Register("mix-up", &up.target,
                "increase the number of mixture components to this overall target")
      .Register("min-count", &up.min_count,
                "minimum per-Gaussian count enforced while mixing up and down")
      .Register("mix-down", &down.target,
                "if nonzero, merge mixture components down to this overall target")
      .Register("power", &up.power, "if mixing up or down, power to allocate Gaussians to states")
      .Register("update-flags", &update_flags, "which GMM parameters to update: subset of mvwt")
      .Register("perturb-factor", &up.perturb_factor,
                "while mixing up, perturb means by standard deviation times this factor")
      .Register("write-occs", &write_occs, "file to write pdf occupation counts to")
      .Register("transition-floor", &est.transitions.floor, "floor for transition probabilities")
      .Register("transition-min-count", &est.transitions.min_count,
                "minimum count required to update transitions from a state")
      .Register("share-for-pdfs", &est.transitions.share_for_pdfs,
                "share all transition parameters where the states have the same pdf");
  RegisterMleOptions(args, &mle);
  args.Register("var-floor-relative", &est.var_floor_relative,
                "also floor variances at this times the global variance of the statistics, per "
                "dimension (HTK's vFloor; 0: off; not a gmm-est option)")
      .Register("srand", &est.seed,
                "seed of the mixing-up perturbations (0 and 1: gmm-est's own draws; not a gmm-est "
                "option)");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  down.power = up.power;
  down.min_count = up.min_count;
  auto flags = ParseGmmFlags(update_flags);
  if (!flags.ok()) return Fail("est", flags.status());
  est.flags = *flags;
  est.occupancies = !write_occs.empty();

  auto model = ReadKaldiStoredModel(pos[0], /*transitions=*/true, /*gmms=*/true);
  if (!model.ok()) return Fail("est", model.status());
  auto stats = ReadModelStatsFile(pos[1]);
  if (!stats.ok()) return Fail("est", stats.status());
  auto done = EstimateKaldiForm(est, *stats, &*model);
  if (!done.ok()) {
    return Fail("est",
                absl::Status(done.status().code(), pos[1] + " and " + pos[0] + ": " +
                                                       std::string(done.status().message())));
  }
  if (done->transitions) LogTransitionUpdate(*done->transitions, *model->hmm);
  for (const std::string& warning : done->gmm.warnings) Warn(warning);
  const MleSummary& sum = done->gmm;
  Log(KaldiNumber(sum.floored_elements) + " variance elements floored in " +
      KaldiNumber(sum.floored_gaussians) + " Gaussians, out of " +
      KaldiNumber(done->gaussians_before));
  if (mle.remove_low_count_gaussians) {
    Log("Removed " + KaldiNumber(sum.removed_gaussians) +
        " Gaussians due to counts < --min-gaussian-occupancy=" +
        KaldiNumber(mle.min_gaussian_occupancy) + " and --remove-low-count-gaussians=true");
  }
  Log("GMM update: Overall " + KaldiNumber(sum.objective_change / sum.count) +
      " objective function improvement per frame over " + KaldiNumber(sum.count) + " frames");
  Log("GMM update: Overall avg like per frame = " +
      KaldiNumber(stats->gmm.total_log_like / stats->gmm.total_frames) + " over " +
      KaldiNumber(stats->gmm.total_frames) + " frames.");
  if (done->mix) LogKaldiMix("gmmscore est", down, up, *done->mix, stats->gmm.num_pdfs());
  if (!write_occs.empty()) {
    if (absl::Status s = WriteOccupancies(done->occupancies, write_occs); !s.ok()) {
      return Fail("est", s);
    }
  }
  if (absl::Status s = WriteKaldiStoredModel(*model, pos[2], binary); !s.ok()) {
    return Fail("est", s);
  }
  Log("Written model to " + pos[2]);
  return 0;
}

}  // namespace gmmscore
