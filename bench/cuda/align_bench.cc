// align_bench: frames aligned per second, scoring included, by the CPU (CpuScorer, then the
// aligner with Kaldi's FasterDecoder semantics and gmm-align-compiled's default beam of 200; one
// thread, and all threads each aligning its own utterances as `-j N` jobs would) and by the GPU
// (CudaAligner: features up, scored into device memory by the fast kernels, one batched exact
// Viterbi launch, alignments down), on the same utterances in the same run; the CPU's scoring and
// Viterbi timed apart; and the forward-backward posteriors, CPU (one thread) and GPU. Cases:
//   i    the Kaldi monophone data (kaldi-mono/ of tests/data, or of $GMMSCORE_TESTDATA: final.mdl,
//        graphs.fsts, feats.ark; acoustic and self-loop scale 0.1), its 6 utterances repeated 200
//        times;
//   ii   a random model of 5001 states x 32 Gaussians x 39 dims with a three-state left-to-right
//        HMM per phone, left-to-right graphs of 300 states (100 phones), utterances of 1000
//        frames of random features (ii:N for N of them, default 1000);
//   iii  the same model, one utterance of an hour (360,000 frames) through 36,000 phones (108,001
//        graph states): its back-pointers (155 GB whole) are checkpointed. The CPU scores it on
//        all threads and runs its Viterbi on one.
// Every GPU row follows a warm-up call (the kernel choices).
// Usage: cuda_align_bench [CASE...]   (default: i ii iii)
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "align/faster_viterbi.h"
#include "align/forward_backward.h"
#include "align/transition_probs.h"
#include "formats/kaldi_fst.h"
#include "formats/matrix_lookup.h"
#include "formats/model_io.h"
#include "kernels/cpu/cpu_scorer.h"
#include "kernels/cuda/align/cuda_aligner.h"
#include "kernels/cuda/align/cuda_viterbi.h"
#include "kernels/cuda/common/cuda_device.h"
#include "model/random_model.h"
#include "util/status_macros.h"

namespace gmmscore {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int32_t kPhones = 1667;
constexpr float kAcousticScale = 0.1f;

// 1667 phones of one topology: three emitting states, self-loop 0.75, forward 0.25.
absl::StatusOr<TransitionModel> ThreeStateModel(int32_t phones) {
  HmmTopology topo;
  for (int32_t p = 1; p <= phones; ++p) topo.phones.push_back(p);
  topo.phone_to_entry.assign(size_t(phones) + 1, 0);
  topo.phone_to_entry[0] = -1;
  std::vector<HmmState> states(4);
  for (int32_t h = 0; h < 3; ++h) {
    states[size_t(h)] = {h, h, {{h, 0.75f}, {h + 1, 0.25f}}};
  }
  topo.entries.push_back(states);
  std::vector<TransitionTuple> tuples;
  std::vector<float> log_probs = {0.0f};
  for (int32_t p = 1; p <= phones; ++p) {
    for (int32_t h = 0; h < 3; ++h) {
      const int32_t pdf = 3 * (p - 1) + h;
      tuples.push_back({p, h, pdf, pdf});
      log_probs.push_back(std::log(0.75f));
      log_probs.push_back(std::log(0.25f));
    }
  }
  return TransitionModel::Create(std::move(topo), std::move(tuples), std::move(log_probs));
}

// A left-to-right graph through `phones` random phones: each HMM state a graph state with its
// self-loop and its forward arc (transition-ids 2k+1 and 2k+2 of tuple k).
AlignGraph LeftToRight(std::mt19937& rng, int32_t phones, int32_t num_phones) {
  std::uniform_int_distribution<int32_t> phone(1, num_phones);
  AlignGraph g;
  g.start = 0;
  for (int32_t i = 0; i < phones; ++i) {
    const int32_t p = phone(rng);
    for (int32_t h = 0; h < 3; ++h) {
      const int32_t tuple = 3 * (p - 1) + h;
      const int32_t s = g.num_states();
      g.arc_begin.push_back(int32_t(g.arcs.size()));
      g.final_cost.push_back(AlignGraph::kNotFinal);
      g.arcs.push_back({2 * tuple + 1, 0, 0.0f, s});
      g.arcs.push_back({2 * tuple + 2, 0, 0.0f, s + 1});
    }
  }
  g.arc_begin.push_back(int32_t(g.arcs.size()));
  g.final_cost.push_back(0.0f);
  g.arc_begin.push_back(int32_t(g.arcs.size()));
  return g;
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// A model for cases ii and iii.
absl::StatusOr<GmmModel> SyntheticModel() {
  GMM_ASSIGN_OR_RETURN(TransitionModel tm, ThreeStateModel(kPhones));
  RandomModelOptions o;
  o.num_states = tm.NumPdfs();
  o.dim = 39;
  o.min_gauss = o.max_gauss = 32;
  o.hmm = std::move(tm);
  return RandomModel(o, 2026);
}

// Utterances to align: graphs with their transition costs, and features.
struct Workload {
  std::vector<AlignGraph> graphs;
  std::vector<Matrix> feats;
  int64_t Frames(size_t n) const {
    int64_t f = 0;
    for (size_t u = 0; u < n; ++u) f += feats[u].rows;
    return f;
  }
};

struct CpuTimes {
  double score_s = 0.0, viterbi_s = 0.0, forward_backward_s = 0.0;
  std::vector<std::vector<int32_t>> paths;
  std::vector<double> scores;  // -(graph cost + acoustic_scale x acoustic cost), as the GPU's
  std::vector<bool> reached_final;
  Matrix first_loglikes;  // utterance 0's scores
};

// The path's score, as ViterbiResult::score counts it.
double PathScore(const std::optional<ViterbiPath>& path) {
  return path ? -(double(path->graph_cost) + double(path->acoustic_cost)) : -INFINITY;
}

// Utterances [0, n) scored and aligned on one thread, each step timed.
absl::StatusOr<CpuTimes> CpuOneThread(const GmmModel& model, const Workload& w, size_t n) {
  CpuScorer scorer(model, 1);
  CpuTimes times;
  for (size_t u = 0; u < n; ++u) {
    Matrix loglikes;
    Clock::time_point start = Clock::now();
    GMM_RETURN_IF_ERROR(scorer.Score(w.feats[u], &loglikes));
    times.score_s += Seconds(start);
    start = Clock::now();
    FasterViterbi decoder(w.graphs[u], model.hmm(), {.beam = 200.0f});
    decoder.Decode(loglikes, kAcousticScale);
    const std::optional<ViterbiPath> path = decoder.BestPath();
    times.viterbi_s += Seconds(start);
    times.paths.push_back(path ? path->transition_ids : std::vector<int32_t>());
    times.scores.push_back(PathScore(path));
    times.reached_final.push_back(decoder.ReachedFinal());
    start = Clock::now();
    GMM_RETURN_IF_ERROR(
        ForwardBackward(w.graphs[u], model.hmm(), loglikes, kAcousticScale).status());
    times.forward_backward_s += Seconds(start);
  }
  return times;
}

// Utterances [0, n) on every hardware thread, each thread scoring and aligning whole utterances
// (as Kaldi's -j N jobs do); the wall time.
absl::StatusOr<double> CpuAllThreads(const GmmModel& model, const Workload& w, size_t n,
                                     int threads) {
  std::atomic<size_t> next{0};
  std::vector<absl::Status> statuses(static_cast<size_t>(threads));
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      CpuScorer scorer(model, 1);
      Matrix loglikes;
      for (size_t u; (u = next++) < n;) {
        if (absl::Status s = scorer.Score(w.feats[u], &loglikes); !s.ok()) {
          statuses[size_t(i)] = s;
          return;
        }
        FasterViterbi decoder(w.graphs[u], model.hmm(), {.beam = 200.0f});
        decoder.Decode(loglikes, kAcousticScale);
      }
    });
  }
  for (std::thread& t : pool) t.join();
  for (const absl::Status& s : statuses) GMM_RETURN_IF_ERROR(s);
  return Seconds(start);
}

struct GpuRun {
  double seconds = 0.0;
  double posteriors_seconds = 0.0;  // 0: not run
  std::vector<ViterbiResult> results;
  bool checkpointed = false;
};

absl::StatusOr<GpuRun> Gpu(const GmmModel& model, const Workload& w) {
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaAligner> aligner, CudaAligner::Create(model, 0));
  std::vector<AlignInput> batch;
  for (size_t u = 0; u < w.graphs.size(); ++u) batch.push_back({&w.graphs[u], &w.feats[u]});
  GMM_RETURN_IF_ERROR(aligner->Align({batch.data(), 1}, kAcousticScale).status());
  GpuRun run;
  const Clock::time_point start = Clock::now();
  GMM_ASSIGN_OR_RETURN(run.results, aligner->Align(batch, kAcousticScale));
  run.seconds = Seconds(start);
  run.checkpointed = aligner->viterbi().checkpointed();
  if (!run.checkpointed) {  // the forward layers of an utterance are kept whole
    GMM_RETURN_IF_ERROR(aligner->Posteriors({batch.data(), 1}, kAcousticScale).status());
    const Clock::time_point fb_start = Clock::now();
    GMM_RETURN_IF_ERROR(aligner->Posteriors(batch, kAcousticScale).status());
    run.posteriors_seconds = Seconds(fb_start);
  }
  return run;
}

void Row(const char* path, size_t utterances, double frames, double seconds) {
  std::printf("| %s | %zu | %.3g | %.3g | %.3f |\n", path, utterances, frames / seconds,
              frames / seconds / 100.0, seconds);
}

// The table of one case: CPU one thread (cpu_n utterances), CPU all threads (all_n), GPU (all).
absl::Status Report(const GmmModel& model, const Workload& w, size_t cpu_n, size_t all_n,
                    bool cpu_scores_on_all_threads) {
  const int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("| path | utterances | frames/s | x real time | s |\n|---|---:|---:|---:|---:|\n");
  CpuTimes cpu;
  if (cpu_scores_on_all_threads) {
    // One long utterance: its scores on all threads (the per-frame cost of one thread is case
    // ii's), its Viterbi on one.
    Matrix loglikes;
    Clock::time_point start = Clock::now();
    GMM_RETURN_IF_ERROR(CpuScorer(model, threads).Score(w.feats[0], &loglikes));
    cpu.score_s = Seconds(start);
    start = Clock::now();
    FasterViterbi decoder(w.graphs[0], model.hmm(), {.beam = 200.0f});
    decoder.Decode(loglikes, kAcousticScale);
    const std::optional<ViterbiPath> path = decoder.BestPath();
    cpu.viterbi_s = Seconds(start);
    cpu.paths.push_back(path ? path->transition_ids : std::vector<int32_t>());
    cpu.scores.push_back(PathScore(path));
    cpu.reached_final.push_back(decoder.ReachedFinal());
    cpu.first_loglikes = std::move(loglikes);
    const double frames = double(w.feats[0].rows);
    char label[96];
    std::snprintf(label, sizeof label, "CPU %d threads: CpuScorer", threads);
    Row(label, 1, frames, cpu.score_s);
    Row("CPU 1 thread: Viterbi, beam 200", 1, frames, cpu.viterbi_s);
  } else {
    GMM_ASSIGN_OR_RETURN(cpu, CpuOneThread(model, w, cpu_n));
    const double frames = double(w.Frames(cpu_n));
    Row("CPU 1 thread: CpuScorer", cpu_n, frames, cpu.score_s);
    Row("CPU 1 thread: Viterbi, beam 200", cpu_n, frames, cpu.viterbi_s);
    Row("CPU 1 thread: both", cpu_n, frames, cpu.score_s + cpu.viterbi_s);
    Row("CPU 1 thread: forward-backward (posteriors)", cpu_n, frames, cpu.forward_backward_s);
    GMM_ASSIGN_OR_RETURN(const double all_s, CpuAllThreads(model, w, all_n, threads));
    char label[96];
    std::snprintf(label, sizeof label, "CPU %d threads, an utterance each: both", threads);
    Row(label, all_n, double(w.Frames(all_n)), all_s);
  }
  GMM_ASSIGN_OR_RETURN(const GpuRun gpu, Gpu(model, w));
  const double frames = double(w.Frames(w.feats.size()));
  Row(gpu.checkpointed ? "GPU CudaAligner, checkpointed traceback: all, transfers incl."
                       : "GPU CudaAligner: scoring + Viterbi, transfers incl.",
      w.feats.size(), frames, gpu.seconds);
  if (gpu.posteriors_seconds > 0.0) {
    Row("GPU CudaAligner: scoring + forward-backward, transfers incl.", w.feats.size(), frames,
        gpu.posteriors_seconds);
  }
  int32_t aligned = 0, same = 0;
  for (const ViterbiResult& r : gpu.results) aligned += r.reached_final;
  for (size_t u = 0; u < cpu.paths.size(); ++u) {
    const std::vector<int32_t>& mine = gpu.results[u].transition_ids;
    if (cpu.paths[u] == mine) {
      ++same;
      continue;
    }
    // Where the paths differ: the exact search's score is the better one unless they tie, or the
    // beam pruned every token that could reach a final state (the CPU's path then ends elsewhere
    // and Kaldi would fail the utterance, or retry it with --retry-beam).
    size_t differ = 0;
    for (size_t t = 0; t < std::min(mine.size(), cpu.paths[u].size()); ++t) {
      differ += mine[t] != cpu.paths[u][t];
    }
    std::printf(
        "utterance %zu: the paths differ on %zu of %zu frames; scores: GPU %.9g, CPU %.9g; "
        "the CPU's beam search %s a final state\n",
        u, differ, mine.size(), double(gpu.results[u].score), cpu.scores[u],
        cpu.reached_final[u] ? "reached" : "did not reach");
  }
  if (cpu_scores_on_all_threads) {
    // The Viterbi alone, on the CPU's scores uploaded: apart from the scoring.
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaViterbi> viterbi, CudaViterbi::Create(0));
    const ViterbiUtterance one[] = {{&w.graphs[0], &cpu.first_loglikes}};
    const Clock::time_point start = Clock::now();
    GMM_ASSIGN_OR_RETURN(const std::vector<ViterbiResult> alone,
                         viterbi->Align(one, model.hmm(), kAcousticScale));
    Row("GPU CudaViterbi alone on the CPU's scores, upload incl.", 1, frames, Seconds(start));
    std::printf("  its score %.9g, the same path as CudaAligner's: %s\n", double(alone[0].score),
                alone[0].transition_ids == gpu.results[0].transition_ids ? "yes" : "no");
  }
  const double cpu_fps = double(w.Frames(cpu.paths.size())) / (cpu.score_s + cpu.viterbi_s);
  std::printf(
      "GPU / CPU 1 thread frames/s: %.0fx; aligned: GPU %d of %zu; same path as the "
      "CPU's on %d of %zu\n\n",
      frames / gpu.seconds / cpu_fps, aligned, w.feats.size(), same, cpu.paths.size());
  return absl::OkStatus();
}

absl::Status CaseI() {
  const char* data = std::getenv("GMMSCORE_TESTDATA");
  const std::string dir = std::string(data != nullptr ? data : GMMSCORE_TESTDATA) + "/kaldi-mono/";
  GMM_ASSIGN_OR_RETURN(LoadedModel loaded, LoadModel(dir + "final.mdl"));
  const GmmModel& model = loaded.model;
  GMM_ASSIGN_OR_RETURN(auto graphs, FstTableReader::Open("ark:" + dir + "graphs.fsts"));
  GMM_ASSIGN_OR_RETURN(auto feats, MatrixLookup::Open("ark:" + dir + "feats.ark"));
  Workload once;
  std::string key;
  AlignGraph graph;
  while (true) {
    GMM_ASSIGN_OR_RETURN(const bool more, graphs->Next(&key, &graph));
    if (!more) break;
    GMM_ASSIGN_OR_RETURN(std::optional<Matrix> f, feats.Take(key));
    if (!f.has_value()) return absl::NotFoundError("no features for " + key);
    GMM_RETURN_IF_ERROR(AddTransitionProbs(model.hmm(), 1.0f, kAcousticScale, &graph));
    once.graphs.push_back(graph);
    once.feats.push_back(*std::move(f));
  }
  constexpr int32_t kCopies = 200;
  Workload w;
  for (int32_t c = 0; c < kCopies; ++c) {
    for (size_t u = 0; u < once.graphs.size(); ++u) {
      w.graphs.push_back(once.graphs[u]);
      w.feats.push_back(once.feats[u]);
    }
  }
  std::printf(
      "case (i): the Kaldi monophone data, %zu utterances (%lld frames) x %d, model %d "
      "pdfs, %d Gaussians, %d dims\n",
      once.graphs.size(), static_cast<long long>(once.Frames(once.feats.size())), kCopies,
      model.num_states(), static_cast<int>(model.num_gauss()), model.dim());
  return Report(model, w, 5 * once.graphs.size(), w.graphs.size(), false);
}

absl::Status CaseII(const GmmModel& model, int32_t utterances) {
  constexpr int32_t kGraphPhones = 100, kFrames = 1000;
  std::mt19937 rng(2026);
  Workload w;
  for (int32_t u = 0; u < utterances; ++u) {
    w.graphs.push_back(LeftToRight(rng, kGraphPhones, kPhones));
    GMM_RETURN_IF_ERROR(AddTransitionProbs(model.hmm(), 1.0f, kAcousticScale, &w.graphs.back()));
    w.feats.push_back(RandomFeatures(kFrames, model.dim(), 0.0f, 3.0f, uint32_t(u)));
  }
  std::printf("case (ii): %d utterances x %d frames, graphs of %d states, model %d x 32 x %d\n",
              utterances, kFrames, w.graphs[0].num_states(), model.num_states(), model.dim());
  return Report(model, w, 2, std::min<size_t>(size_t(utterances), 64), false);
}

absl::Status CaseIII(const GmmModel& model) {
  constexpr int32_t kGraphPhones = 36000, kFrames = 360000;
  std::mt19937 rng(2027);
  Workload w;
  w.graphs.push_back(LeftToRight(rng, kGraphPhones, kPhones));
  GMM_RETURN_IF_ERROR(AddTransitionProbs(model.hmm(), 1.0f, kAcousticScale, &w.graphs.back()));
  w.feats.push_back(RandomFeatures(kFrames, model.dim(), 0.0f, 3.0f, 7u));
  std::printf(
      "case (iii): 1 utterance x %d frames (an hour), a graph of %d states, model %d x 32 "
      "x %d\n",
      kFrames, w.graphs[0].num_states(), model.num_states(), model.dim());
  return Report(model, w, 1, 1, true);
}

absl::Status Run(const std::vector<std::string>& cases) {
  std::optional<GmmModel> synthetic;
  for (const std::string& c : cases) {
    if (c == "i") {
      GMM_RETURN_IF_ERROR(CaseI());
      continue;
    }
    if (!synthetic.has_value()) {
      GMM_ASSIGN_OR_RETURN(GmmModel m, SyntheticModel());
      synthetic.emplace(std::move(m));
    }
    if (c == "ii" || c.starts_with("ii:")) {
      const int32_t n = c == "ii" ? 1000 : std::atoi(c.c_str() + 3);
      if (n < 1) return absl::InvalidArgumentError("bad case " + c);
      GMM_RETURN_IF_ERROR(CaseII(*synthetic, n));
    } else if (c == "iii") {
      GMM_RETURN_IF_ERROR(CaseIII(*synthetic));
    } else {
      return absl::InvalidArgumentError("unknown case " + c + " (i, ii, ii:N, iii)");
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace gmmscore

int main(int argc, char** argv) {
  std::vector<std::string> cases(argv + 1, argv + argc);
  if (cases.empty()) cases = {"i", "ii", "iii"};
  const absl::Status s = gmmscore::Run(cases);
  if (!s.ok()) {
    std::fprintf(stderr, "align_bench: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
