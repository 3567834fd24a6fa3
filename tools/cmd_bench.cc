// gmmscore bench --backend cpu: throughput of the fast path against the OpenBLAS two-kernel
// path, on a random model of the given size, measured in the same run (docs/PERFORMANCE.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_split.h"
#include "bench/blas_two_kernel_scorer.h"
#include "kernels/cpu/cpu_scorer.h"
#include "kernels/cpu/reference_scorer.h"
#include "kernels/cpu/simd_kernel.h"
#include "model/random_model.h"
#include "model/score_guard.h"
#include "tools/command_util.h"
#include "tools/commands.h"

namespace gmmscore {
namespace {

struct Timing {
  double median_s;
  double max_abs_error;      // on the first frames of the first batch
  double adversarial_error;  // on AdversarialFeatures, as a multiple of the contract's tolerance
};

// Frames and their float64 scores.
struct CheckSet {
  Matrix feats;
  std::vector<double> reference;
};

// Median seconds per batch over `iterations`, cycling through distinct random batches, after
// two warm-up calls, and the errors on the two check sets.
absl::StatusOr<Timing> TimeScorer(const Scorer& scorer, const std::vector<Matrix>& batches,
                                  int iterations, const CheckSet& random,
                                  const CheckSet& adversarial) {
  Matrix out;
  for (int i = 0; i < 2; ++i) {
    if (absl::Status s = scorer.Score(batches[i % batches.size()], &out); !s.ok()) return s;
  }
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    const Matrix& feats = batches[i % batches.size()];
    const auto start = std::chrono::steady_clock::now();
    if (absl::Status s = scorer.Score(feats, &out); !s.ok()) return s;
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  Timing timing{times[times.size() / 2], 0.0, 0.0};
  if (absl::Status s = scorer.Score(random.feats, &out); !s.ok()) return s;
  for (size_t i = 0; i < random.reference.size(); ++i) {
    timing.max_abs_error =
        std::max(timing.max_abs_error, std::abs(out.data[i] - random.reference[i]));
  }
  if (absl::Status s = scorer.Score(adversarial.feats, &out); !s.ok()) return s;
  for (size_t i = 0; i < adversarial.reference.size(); ++i) {
    const double ref = adversarial.reference[i];
    timing.adversarial_error =
        std::max(timing.adversarial_error, std::abs(out.data[i] - ref) / ContractTolerance(ref));
  }
  return timing;
}

}  // namespace

int RunBench(int argc, char** argv) {
  Args args("bench", "[--backend cpu] [--states N --gauss N --dim N --frames N]");
  std::string backend = "cpu";
  // A model of a recognizer's size, not RandomModelOptions' small one; --gauss Gaussians in
  // every state.
  RandomModelOptions o{.num_states = 5000, .dim = 39, .max_gauss = 32, .mean_offset = -5.0f};
  int32_t frames = 512, iterations = 10;
  std::string thread_list = "1,0";
  args.Register("backend", &backend, "cpu")
      .Register("states", &o.num_states, "states in the random model")
      .Register("gauss", &o.max_gauss, "Gaussians per state")
      .Register("dim", &o.dim, "feature dimension")
      .Register("frames", &frames, "frames per batch")
      .Register("iterations", &iterations, "timed batches per measurement (median reported)")
      .Register("threads", &thread_list, "thread counts to measure, 0 for all");
  if (int code = ParseOrExit(args, argc, argv); code >= 0) return code;
  if (backend != "cpu") {
    return Fail("bench", absl::UnimplementedError("this build benchmarks --backend cpu only"));
  }
  for (const int32_t v : {o.num_states, o.max_gauss, o.dim, frames, iterations}) {
    if (v < 1) return Fail("bench", absl::InvalidArgumentError("sizes must be >= 1"));
  }
  o.min_gauss = o.max_gauss;
  std::vector<int> thread_counts;
  for (const absl::string_view part : absl::StrSplit(thread_list, ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 0) {
      return Fail("bench", absl::InvalidArgumentError("--threads: a list of counts, 0 for all"));
    }
    thread_counts.push_back(n == 0 ? int(std::thread::hardware_concurrency()) : n);
  }

  const GmmModel model = RandomModel(o, 42);
  std::vector<Matrix> batches;
  for (uint32_t i = 0; i < 4; ++i)
    batches.push_back(RandomFeatures(frames, o.dim, -5.0f, 3.0f, 1000 + i));
  CheckSet random{Matrix(std::min(frames, 16), o.dim), {}};
  std::copy_n(batches[0].data.begin(), random.feats.data.size(), random.feats.data.begin());
  random.reference = ReferenceScores(model, random.feats);
  CheckSet adversarial{AdversarialFeatures(model, 16, 7), {}};
  adversarial.reference = ReferenceScores(model, adversarial.feats);

  const double gauss_frames = double(model.num_gauss()) * frames;
  const double audio_s = frames / 100.0;
  std::printf(
      "gmmscore bench: model %d states x %d Gaussians x %d dims (%lld Gaussians), batch "
      "%d frames, %d timed batches (median), SIMD target %s\n",
      o.num_states, o.max_gauss, o.dim, static_cast<long long>(model.num_gauss()), frames,
      iterations, SimdTargetName());
  std::printf(
      "max|err|: on 16 random frames; adversarial: the worst error on 16 frames built to "
      "be hard (model/random_model.h), as a multiple of the contract's tolerance "
      "max(1e-3, 2^-19 |score|): above 1 breaks it\n");
  std::printf("%-8s %-26s %12s %16s %10s %12s %12s\n", "threads", "path", "ms/batch",
              "Gauss-frames/s", "RTF", "max|err|", "adversarial");
  for (int threads : thread_counts) {
    CpuScorer fast(model, threads);
    CpuScorer unguarded(model, threads);
    unguarded.set_guard_gamma(0.0f);
    BlasTwoKernelScorer peer(model, threads);
    double fast_s = 0, unguarded_s = 0, peer_s = 0;
    for (const auto& [scorer, name, seconds] :
         {std::tuple<const Scorer*, std::string, double*>{&fast, fast.name(), &fast_s},
          {&unguarded, "cpu-simd without the guard", &unguarded_s},
          {&peer, peer.name(), &peer_s}}) {
      auto t = TimeScorer(*scorer, batches, iterations, random, adversarial);
      if (!t.ok()) return Fail("bench", t.status());
      *seconds = t->median_s;
      std::printf("%-8d %-26s %12.3f %16.3e %10.5f %12.2e %12.2f\n", threads, name.c_str(),
                  t->median_s * 1e3, gauss_frames / t->median_s, t->median_s / audio_s,
                  t->max_abs_error, t->adversarial_error);
    }
    std::printf("%-8d ratio cpu-simd / two-kernel: %.2fx; the guard's cost: %+.1f%%\n", threads,
                peer_s / fast_s, 100.0 * (fast_s / unguarded_s - 1.0));
  }
  return 0;
}

}  // namespace gmmscore
