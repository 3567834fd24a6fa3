// Kaldi's gmm-mixup (run under that name): a model's Gaussians merged down (--mix-down,
// train/mix_down.h) and then split up (--mix-up, train/mix_up.h, perturbed by Kaldi's unseeded
// rand() draws) towards totals shared out by the pdfs' occupancies, as gmm-est mixes; pdfs left
// alone keep Kaldi's bytes (formats/kaldi_model_copy.h).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/kaldi_io.h"
#include "formats/kaldi_model_copy.h"
#include "formats/kaldi_stream.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "tools/kaldi_mix_log.h"
#include "train/kaldi_form_update.h"
#include "util/kaldi_random.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmm-mixup";

struct MixOptions {
  MixDownOptions down;
  MixUpOptions up;
};

// A vector object (gmm-est --write-occs), binary or text, one occupancy per pdf.
absl::StatusOr<std::vector<float>> ReadOccupancies(const std::string& rxfilename,
                                                   int32_t num_pdfs) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<InputStream> input, InputStream::Open(rxfilename));
  KaldiReader reader(input->stream(), input->name(),
                     KaldiReader::ConsumeBinaryMarker(input->stream()));
  GMM_ASSIGN_OR_RETURN(std::vector<float> occs, reader.FloatVector());
  GMM_RETURN_IF_ERROR(input->Close());
  if (occs.size() != size_t(num_pdfs)) {
    return absl::InvalidArgumentError(absl::StrCat("Dimension of state occupancies ", occs.size(),
                                                   " does not match num-pdfs ", num_pdfs));
  }
  return occs;
}

// Merges, then splits, logging as Kaldi's AmDiagGmm does.
absl::Status MixModel(const std::vector<std::string>& pos, const MixOptions& opts, bool binary) {
  GMM_ASSIGN_OR_RETURN(KaldiStoredModel stored, ReadKaldiStoredModel(pos[0], true, true));
  if (opts.down.target != 0 || opts.up.target != 0) {
    GMM_ASSIGN_OR_RETURN(const std::vector<float> occs,
                         ReadOccupancies(pos[1], static_cast<int32_t>(stored.pdfs.size())));
    KaldiRandom random;  // rand() never seeded
    GMM_ASSIGN_OR_RETURN(
        const KaldiMixSummary mixed,
        MixKaldiForm(
            occs, opts.down, opts.up, [&] { return double{random.Gauss()}; }, &stored));
    LogKaldiMix(kProgram, opts.down, opts.up, mixed, static_cast<int32_t>(stored.pdfs.size()));
  }
  return WriteKaldiStoredModel(stored, pos[2], binary);
}

}  // namespace

int RunGmmMixup(int argc, char** argv) {
  Args args(kProgram,
            "[options] <model-in> <state-occs-in> <model-out>\n"
            "Does GMM mixing up (and Gaussian merging)\n"
            "e.g. of mixing up: gmm-mixup --mix-up=4000 1.mdl 1.occs 2.mdl\n"
            "e.g. of merging: gmm-mixup --mix-down=2000 1.mdl 1.occs 2.mdl");
  // Each option bound to the field that holds its default (train/mix_up.h, train/mix_down.h);
  // mixing down takes mixing up's power and min-count.
  MixOptions opts;
  bool binary = true;
  args.Register("binary", &binary, "Write output in binary mode")
      .Register("mix-up", &opts.up.target,
                "Increase number of mixture components to this overall target.")
      .Register("min-count", &opts.up.min_count, "Minimum count enforced while mixing up.")
      .Register("mix-down", &opts.down.target,
                "If nonzero, merge mixture components to this target.")
      .Register("power", &opts.up.power, "If mixing up, power to allocate Gaussians to states.")
      .Register("perturb-factor", &opts.up.perturb_factor,
                "While mixing up, perturb means by standard deviation times this factor.");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 3) return Usage(args);
  opts.down.power = opts.up.power;
  opts.down.min_count = opts.up.min_count;
  if (absl::Status s = MixModel(pos, opts, binary); !s.ok()) {
    return Fail(kProgram, s);
  }
  KaldiLog(stderr, "LOG", kProgram, "Written model to " + pos[2]);
  return 0;
}

}  // namespace gmmscore
