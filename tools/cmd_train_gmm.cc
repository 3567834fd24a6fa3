// gmmscore train-gmm: a single diagonal GMM (a UBM) trained from features, as Kaldi's
// gmm-global-init-from-feats: the same arguments, options, defaults, log lines and output (a Kaldi
// DiagGmm object), with the E-step on the selected GPUs (--backend, --devices: each GPU keeps its
// share of the frames, or streams it where it does not fit; the statistics are summed on the host)
// or the CPU's threads; and --init / --init-method for other starting points.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "formats/kaldi_model.h"
#include "formats/matrix_table.h"
#include "kernels/backend.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/kaldi_log.h"
#include "train/device_estep.h"
#include "train/global_gmm_training.h"
#include "train/gmm_init.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

constexpr char kProgram[] = "gmmscore train-gmm";

void Log(const std::string& what) { KaldiLog(stderr, "LOG", kProgram, what); }

// The model training starts from: the --init file, or `start` Gaussians from the frames.
absl::StatusOr<GmmModel> InitialModel(const std::string& init, const std::string& method,
                                      const Matrix& frames, int32_t start, std::mt19937& rng) {
  if (!init.empty()) {
    GMM_ASSIGN_OR_RETURN(GmmModel model, ReadKaldiDiagGmmFile(init));
    if (model.dim() != frames.cols) {
      return absl::InvalidArgumentError(init + " has dimension " + KaldiNumber(model.dim()) +
                                        ", the features " + KaldiNumber(frames.cols));
    }
    return model;
  }
  Log("Initializing GMM means from " +
      std::string(method == "random" ? "random frames" : "k-means++ seeds") + " to " +
      KaldiNumber(start) + " Gaussians.");
  return InitGmmFromFrames(
      frames, start, method == "random" ? GmmInit::kRandomFrames : GmmInit::kKMeansPlusPlus, rng);
}

// gmm-global-init-from-feats' lines on an iteration, and ours on its speed.
void LogIteration(const GlobalGmmIteration& it, int32_t frames) {
  Log("Likelihood per frame on iteration " + KaldiNumber(it.iter) + " was " +
      KaldiNumber(it.log_like_per_frame) + " over " + KaldiNumber(frames) + " frames.");
  Log("Objective-function change on iteration " + KaldiNumber(it.iter) + " was " +
      KaldiNumber(it.objective_change_per_frame) + " over " + KaldiNumber(it.count) + " frames.");
  std::fprintf(stderr,
               "%s: iteration %d: avg log-likelihood per frame %.4f, %lld Gaussians, E-step %.3f "
               "s (%.3g frames/s)\n",
               kProgram, it.iter, it.log_like_per_frame, static_cast<long long>(it.num_gauss),
               it.estep_seconds, double(frames) / it.estep_seconds);
  if (it.split_to > 0) Log("Splitting to " + KaldiNumber(it.split_to) + " Gaussians.");
}

}  // namespace

int RunTrainGmm(int argc, char** argv) {
  Args args("train-gmm",
            "[options] FEATS-RSPEC MODEL-OUT\n"
            "Initializes a single diagonal GMM and trains it with EM on features kept in memory\n"
            "(Kaldi's gmm-global-init-from-feats), on GPUs or the CPU.\n"
            "e.g.: gmmscore train-gmm --num-gauss=512 scp:train.scp ubm.dubm");
  bool binary = true;
  GlobalGmmTrainingOptions training;
  int32_t& num_gauss = training.num_gauss;
  int32_t& iters = training.num_iters;
  int32_t num_gauss_init = 0, num_frames = 200000, seed = 0;
  std::string init, method = "random";
  // gmm-global-init-from-feats' --num-threads (4), where BackendRequest's 0 means all; its
  // backend is BackendRequest's (auto).
  BackendRequest request{.program = kProgram, .cpu_threads = 4};
  args.Register("binary", &binary, "write output in binary mode")
      .Register("num-gauss", &num_gauss, "number of Gaussians in the model")
      .Register("num-gauss-init", &num_gauss_init,
                "number of Gaussians initially (if nonzero and less than --num-gauss, mixture "
                "splitting up to --num-gauss over the first half of the iterations)")
      .Register("num-iters", &iters, "number of iterations of training")
      // An alias without a default of its own: a second binding to iters would reset it.
      .Add({"iterations", "N", "the same as --num-iters"})
      .Register("num-frames", &num_frames,
                "number of feature vectors to keep in memory and train on (randomly chosen from "
                "the input; 0: all)")
      .Register("srand", &seed, "seed for the random number generator")
      .Register("num-threads", &request.cpu_threads, "CPU threads for the statistics (0: all)");
  RegisterMleOptions(args, &training.mle);
  args.Register("init", &init,
                "start from this single-GMM model (a Kaldi DiagGmm, or any model file of one "
                "state) instead of from frames")
      .Register("init-method", &method, "random (frames as means, as Kaldi) or kmeans++")
      .Register("backend", &request.backend, "cpu, cuda or auto: where the statistics are computed")
      .Register("devices", &request.devices,
                "GPUs for --backend cuda or auto: all, or numbers like 0,1");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string>& pos = args.positional();
  if (pos.size() != 2) return Usage(args);
  if (args.Has("iterations")) {
    auto iterations = args.GetInt("iterations");
    if (!iterations.ok()) return Fail("train-gmm", iterations.status());
    iters = *iterations;
  }
  if (num_gauss < 1 || iters < 0) {
    return Fail("train-gmm", absl::InvalidArgumentError("--num-gauss must be >= 1 and "
                                                        "--num-iters >= 0"));
  }
  if (method != "random" && method != "kmeans++") {
    return Fail("train-gmm", absl::InvalidArgumentError(
                                 "--init-method is random or kmeans++, not '" + method + "'"));
  }

  // The frames, kept by reservoir sampling as gmm-global-init-from-feats keeps them.
  FrameReservoir reservoir(num_frames, uint32_t(seed));
  {
    auto reader = MatrixTableReader::Open(pos[0]);
    if (!reader.ok()) return Fail("train-gmm", reader.status());
    Log("Reading features (will keep " +
        (num_frames > 0 ? KaldiNumber(num_frames) : std::string("all")) + " frames.)");
    std::string key;
    Matrix feats;
    while (true) {
      auto more = (*reader)->Next(&key, &feats);
      if (!more.ok()) return Fail("train-gmm", more.status());
      if (!*more) break;
      if (absl::Status s = reservoir.AddUtterance(key, feats); !s.ok()) {
        return Fail("train-gmm", s);
      }
    }
  }
  const Matrix& frames = reservoir.frames();
  if (frames.rows == 0) return Fail("train-gmm", absl::InvalidArgumentError("no features read"));
  if (num_frames > 0 && reservoir.seen() > num_frames) {
    Log("Kept " + KaldiNumber(num_frames) + " out of " + KaldiNumber(reservoir.seen()) +
        " input frames = " + KaldiNumber(100.0 * double(num_frames) / double(reservoir.seen())) +
        "%.");
  }

  std::mt19937 rng(static_cast<uint32_t>(seed));
  const int32_t start =
      (num_gauss_init <= 0 || num_gauss_init > num_gauss) ? num_gauss : num_gauss_init;
  absl::StatusOr<GmmModel> model = InitialModel(init, method, frames, start, rng);
  if (!model.ok()) return Fail("train-gmm", model.status());

  auto devices = MakeGmmStatisticsDevices(request, *model, 0);
  if (!devices.ok()) return Fail("train-gmm", devices.status());
  DeviceEStep estep(frames, *std::move(devices), request.cpu_threads, Log);
  if (absl::Status s = estep.Start(); !s.ok()) return Fail("train-gmm", s);

  auto trained =
      TrainGlobalGmm(training, *std::move(model), frames, estep, rng,
                     [&](const GlobalGmmIteration& it) { LogIteration(it, frames.rows); });
  if (!trained.ok()) return Fail("train-gmm", trained.status());
  model = *std::move(trained);
  if (absl::Status s = WriteKaldiDiagGmmFile(*model, pos[1], binary); !s.ok()) {
    return Fail("train-gmm", s);
  }
  Log("Wrote model to " + pos[1]);
  return 0;
}

}  // namespace gmmscore
