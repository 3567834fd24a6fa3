// gmmscore score: offline scoring of a feature table against one model, or several fused.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "feat/wave_feature_reader.h"
#include "formats/matrix_table.h"
#include "formats/model_io.h"
#include "kernels/backend.h"
#include "model/shape_checks.h"
#include "tools/command_util.h"
#include "tools/commands.h"
#include "tools/score_table.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// One line on stderr every two seconds, and one at the end.
class Progress {
 public:
  explicit Progress(int64_t gauss_per_frame) : gauss_per_frame_(gauss_per_frame) {}
  void Add(int64_t frames) {
    ++utterances_;
    frames_ += frames;
    if (Seconds(last_) >= 2.0) {
      Print("\r");
      last_ = Clock::now();
      printed_ = true;
    }
  }
  void Finish() {
    if (printed_) std::fputc('\n', stderr);
  }
  int64_t utterances() const { return utterances_; }
  int64_t frames() const { return frames_; }
  double elapsed() const { return Seconds(start_); }

 private:
  void Print(const char* prefix) const {
    const double t = elapsed();
    std::fprintf(stderr, "%sscored %lld utterances, %lld frames, %.1f s, %.3g Gaussian-frames/s",
                 isatty(2) ? prefix : "", static_cast<long long>(utterances_),
                 static_cast<long long>(frames_), t,
                 double(frames_) * double(gauss_per_frame_) / t);
    if (!isatty(2)) std::fputc('\n', stderr);
  }
  int64_t gauss_per_frame_;
  int64_t utterances_ = 0, frames_ = 0;
  Clock::time_point start_ = Clock::now(), last_ = Clock::now();
  bool printed_ = false;
};

// The features to score: a feature table, or audio through the front end.
absl::StatusOr<std::unique_ptr<MatrixTableReader>> OpenFeatures(const std::string& feats,
                                                                const std::string& wav,
                                                                const std::string& feat_config) {
  if (!feats.empty()) return MatrixTableReader::Open(feats);
  FrontEndOptions opts;
  if (!feat_config.empty()) {
    GMM_ASSIGN_OR_RETURN(opts, ReadFrontEndConfig(feat_config));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<WaveFeatureTableReader> waves,
                       WaveFeatureTableReader::Open(wav, opts));
  return std::unique_ptr<MatrixTableReader>(std::move(waves));
}

}  // namespace

int RunScore(int argc, char** argv) {
  Args args("score",
            "--model PATH [--model PATH ...] (--feats RSPEC | --wav RSPEC [--feat-config F]) "
            "--out WSPEC [options]");
  std::string feats, wav, feat_config, out;
  FusionOptions fusion_options;
  // Offline scoring is on the CPU unless --backend says otherwise (BackendRequest's own default
  // is auto, the daemon's).
  BackendRequest request{.backend = "cpu", .program = "gmmscore score"};
  float variance_floor = 0.0f;
  bool quiet = false;
  args.Add({"model", "PATH", "model file or Sphinx directory", "", true})
      .Register("feats", &feats, "features: ark:F, ark,t:F, scp:F, htk:F, sphinx:F, scp,htk:F, ...")
      .Register("wav", &wav,
                "audio instead of features: scp:wav.scp (files, 'CMD |' pipes) or ark:F, through "
                "the front end of --feat-config")
      .Register("feat-config", &feat_config,
                "the front end's options for --wav, compute-feats's (Kaldi conf syntax); default: "
                "compute-feats's defaults")
      .Register("out", &out, "scores (frames x states): ark:F, ark,t:F, ark,scp:F,S, ark:-");
  AddFusionOptions(args, &fusion_options);
  args.Register("backend", &request.backend, "cpu, cuda or auto")
      .Register("devices", &request.devices,
                "GPUs for --backend cuda or auto: all, or numbers like 0,1; utterances are spread "
                "over them")
      .Register("threads", &request.cpu_threads, "CPU threads, 0 for all")
      .Register("variance-floor", &variance_floor, "raise variances below F (0: keep the model's)")
      .Register("quiet", &quiet, "no progress or summary on stderr");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string> model_paths = args.GetAll("model");
  if (model_paths.empty() || feats.empty() == wav.empty() || out.empty()) {
    std::fprintf(stderr,
                 "gmmscore score: --model, --out and one of --feats and --wav are required\n%s",
                 args.Help().c_str());
    return 2;
  }
  if (!feat_config.empty() && wav.empty()) {
    return Fail("score", absl::InvalidArgumentError("--feat-config goes with --wav"));
  }
  auto fusion = FusionFromOptions(fusion_options);
  if (!fusion.ok()) return Fail("score", fusion.status());
  if (absl::Status s = ValidateFusion(&*fusion, model_paths.size()); !s.ok()) {
    return Fail("score", s);
  }

  std::vector<GmmModel> models;
  for (const std::string& path : model_paths) {
    auto loaded = LoadModel(path, variance_floor);
    if (!loaded.ok()) return Fail("score", loaded.status());
    models.push_back(std::move(loaded->model));
  }
  int64_t gauss_per_frame = 0;
  std::vector<ModelShape> shapes;
  for (size_t i = 0; i < models.size(); ++i) {
    shapes.push_back({model_paths[i], models[i].num_states(), models[i].dim()});
    gauss_per_frame += models[i].num_gauss();
  }
  if (absl::Status s = CheckSameShape(shapes); !s.ok()) return Fail("score", s);
  auto scorers = MakeFusedScorers(request, models, *fusion);
  if (!scorers.ok()) return Fail("score", scorers.status());

  auto reader = OpenFeatures(feats, wav, feat_config);
  if (!reader.ok()) return Fail("score", reader.status());
  auto writer = MatrixTableWriter::Open(out);
  if (!writer.ok()) return Fail("score", writer.status());

  Progress progress(gauss_per_frame);
  if (absl::Status s = ScoreTable(reader->get(), writer->get(), *scorers,
                                  [&](int64_t frames) {
                                    if (!quiet) progress.Add(frames);
                                  });
      !s.ok()) {
    return Fail("score", s);
  }
  if (absl::Status s = (*writer)->Close(); !s.ok()) return Fail("score", s);
  if (!quiet) {
    progress.Finish();
    const double t = progress.elapsed();
    std::fprintf(stderr,
                 "gmmscore score: %lld utterances, %lld frames x %d states (%zu model%s, %s) -> "
                 "%s\n  %.3f s, real-time factor %.4f, %.3g Gaussian-frames/s\n",
                 static_cast<long long>(progress.utterances()),
                 static_cast<long long>(progress.frames()), models[0].num_states(), models.size(),
                 models.size() > 1 ? "s" : "", (*scorers)[0]->name().c_str(),
                 (*writer)->description().c_str(), t,
                 progress.frames() > 0 ? t / (double(progress.frames()) / 100.0) : 0.0,
                 t > 0 ? double(progress.frames()) * double(gauss_per_frame) / t : 0.0);
  }
  return 0;
}

}  // namespace gmmscore
