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
absl::StatusOr<std::unique_ptr<MatrixTableReader>> OpenFeatures(const Args& args) {
  if (args.Has("feats")) return MatrixTableReader::Open(args.Get("feats"));
  FrontEndOptions opts;
  if (args.Has("feat-config")) {
    GMM_ASSIGN_OR_RETURN(opts, ReadFrontEndConfig(args.Get("feat-config")));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<WaveFeatureTableReader> waves,
                       WaveFeatureTableReader::Open(args.Get("wav"), opts));
  return std::unique_ptr<MatrixTableReader>(std::move(waves));
}

}  // namespace

int RunScore(int argc, char** argv) {
  Args args("score",
            "--model PATH [--model PATH ...] (--feats RSPEC | --wav RSPEC [--feat-config F]) "
            "--out WSPEC [options]");
  args.Add({"model", "PATH", "model file or Sphinx directory", "", true})
      .Add({"feats", "RSPEC", "features: ark:F, ark,t:F, scp:F, htk:F, sphinx:F, scp,htk:F, ..."})
      .Add({"wav", "RSPEC",
            "audio instead of features: scp:wav.scp (files, 'CMD |' pipes) or ark:F, through "
            "the front end of --feat-config"})
      .Add({"feat-config", "FILE",
            "the front end's options for --wav, compute-feats's (Kaldi conf syntax); default: "
            "compute-feats's defaults"})
      .Add({"out", "WSPEC", "scores (frames x states): ark:F, ark,t:F, ark,scp:F,S, ark:-"});
  AddFusionOptions(args);
  args.Add({"backend", "NAME", "cpu, cuda or auto", "cpu"})
      .Add({"devices", "LIST",
            "GPUs for --backend cuda or auto: all, or numbers like 0,1; utterances are spread "
            "over them",
            "all"})
      .Add({"threads", "N", "CPU threads, 0 for all", "0"})
      .Add({"variance-floor", "F", "raise variances below F (0: keep the model's)", "0"})
      .Add({"quiet", "", "no progress or summary on stderr"});
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  const std::vector<std::string> model_paths = args.GetAll("model");
  if (model_paths.empty() || args.Has("feats") == args.Has("wav") || !args.Has("out")) {
    std::fprintf(stderr,
                 "gmmscore score: --model, --out and one of --feats and --wav are required\n%s",
                 args.Help().c_str());
    return 2;
  }
  if (args.Has("feat-config") && !args.Has("wav")) {
    return Fail("score", absl::InvalidArgumentError("--feat-config goes with --wav"));
  }
  auto threads = args.GetInt("threads");
  auto floor = args.GetDouble("variance-floor");
  auto fusion = FusionFromArgs(args);
  for (const absl::Status& s : {threads.status(), floor.status(), fusion.status()}) {
    if (!s.ok()) return Fail("score", s);
  }
  if (absl::Status s = ValidateFusion(&*fusion, model_paths.size()); !s.ok()) {
    return Fail("score", s);
  }

  std::vector<GmmModel> models;
  for (const std::string& path : model_paths) {
    auto loaded = LoadModel(path, static_cast<float>(*floor));
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
  const BackendRequest request{.backend = args.Get("backend"),
                               .devices = args.Get("devices"),
                               .program = "gmmscore score",
                               .cpu_threads = int32_t(*threads)};
  auto scorers = MakeFusedScorers(request, models, *fusion);
  if (!scorers.ok()) return Fail("score", scorers.status());

  auto reader = OpenFeatures(args);
  if (!reader.ok()) return Fail("score", reader.status());
  auto writer = MatrixTableWriter::Open(args.Get("out"));
  if (!writer.ok()) return Fail("score", writer.status());

  const bool quiet = args.GetBool("quiet");
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
