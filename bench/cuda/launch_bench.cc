// cuda_launch_bench: whether CUDA graphs help the daemon's small-batch path. A batch of a GPU
// lane (CudaWorkspace: features in, each model's kernels, the fusion, scores out) is issued
// either as stream operations, as the lane does, or as one replay of a CUDA graph captured from
// the same operations; each timed on the host from the staged features to the scores in pinned
// memory (what a batch waits for), median of kIterations after a warm-up, for batches of 1 to 32
// windows of 10 frames of model (c), 5000 states x 32 Gaussians x 39 dims, one model and a set of
// two fused by log-add.
//
// Usage: cuda_launch_bench
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/status/statusor.h"
#include "kernels/cuda/score/cuda_resident_model.h"
#include "kernels/cuda/score/cuda_workspace.h"
#include "kernels/cuda/score/kernel_chooser.h"
#include "model/random_model.h"

namespace gmmscore {
namespace {

constexpr int kWarmup = 20;
constexpr int kIterations = 300;
constexpr int32_t kWindow = 10;

using Clock = std::chrono::steady_clock;

template <typename Batch>
absl::StatusOr<double> MedianMicroseconds(Batch&& batch) {
  std::vector<double> us;
  for (int i = 0; i < kWarmup + kIterations; ++i) {
    const Clock::time_point start = Clock::now();
    GMM_RETURN_IF_ERROR(batch());
    if (i >= kWarmup)
      us.push_back(1e6 * std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

// Destroys the graph and its executable however the measurement ends.
struct Graph {
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
  }
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

absl::Status Run() {
  RandomModelOptions o;
  o.num_states = 5000;
  o.dim = 39;
  o.min_gauss = o.max_gauss = 32;
  const std::vector<GmmModel> models = {RandomModel(o, 1), RandomModel(o, 2)};
  constexpr int32_t kMaxFrames = 32 * kWindow;
  std::vector<std::unique_ptr<CudaResidentModel>> residents;
  std::vector<const CudaResidentModel*> set;
  std::vector<std::unique_ptr<KernelChooser>> choosers;
  WorkspaceCapacity capacity{kMaxFrames, o.dim, o.num_states, 2, 0};
  for (const GmmModel& m : models) {
    GMM_ASSIGN_OR_RETURN(const CudaResidentModel::Layouts layouts,
                         CudaResidentModel::Plan(m, CudaKernelChoice()));
    GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaResidentModel> resident,
                         CudaResidentModel::Upload(layouts, 0));
    capacity.split_floats =
        std::max(capacity.split_floats, resident->SplitScratchFloats(kMaxFrames));
    set.push_back(resident.get());
    residents.push_back(std::move(resident));
    choosers.push_back(std::make_unique<KernelChooser>(CudaKernelChoice(), kMaxFrames));
  }
  GMM_ASSIGN_OR_RETURN(std::unique_ptr<CudaWorkspace> workspace, CudaWorkspace::Create(0));
  GMM_RETURN_IF_ERROR(workspace->Reserve(capacity));
  const Matrix feats = RandomFeatures(kMaxFrames, o.dim, 0.0f, 3.0f, 3);
  FusionSpec log_add;
  log_add.rule = FusionRule::kLogAdd;
  GMM_RETURN_IF_ERROR(ValidateFusion(&log_add, 2));

  std::printf(
      "| models | windows of %d frames | stream launches us | graph replay us | graph / stream |\n"
      "|---:|---:|---:|---:|---:|\n",
      kWindow);
  for (size_t num_models : {size_t(1), size_t(2)}) {
    for (int32_t windows : {1, 2, 4, 8, 16, 32}) {
      const int32_t frames = windows * kWindow;
      const std::vector<FusionSegment> segments(size_t(windows), {kWindow, &log_add});
      const std::span<const CudaResidentModel* const> models_used(set.data(), num_models);
      // Tunes the batch size first (outside both timings), as the daemon does at a model's load.
      std::vector<CudaKernelConfig> configs;
      for (size_t k = 0; k < num_models; ++k) {
        GMM_ASSIGN_OR_RETURN(const CudaKernelConfig config,
                             choosers[k]->ConfigFor(*set[k], frames, *workspace));
        configs.push_back(config);
      }
      const auto stage = [&] {
        std::memcpy(workspace->staged_feats(), feats.data.data(),
                    size_t(frames) * o.dim * sizeof(float));
      };
      // Checks the stream path works.
      stage();
      GMM_RETURN_IF_ERROR(workspace->Enqueue(models_used, configs, segments, frames, false));
      GMM_RETURN_IF_ERROR(workspace->Wait());
      GMM_ASSIGN_OR_RETURN(
          const double stream_us, MedianMicroseconds([&]() -> absl::Status {
            stage();
            GMM_RETURN_IF_ERROR(workspace->Enqueue(models_used, configs, segments, frames, false));
            return workspace->Wait();
          }));
      Graph graph;
      GMM_CUDA_RETURN_IF_ERROR(
          cudaStreamBeginCapture(workspace->stream(), cudaStreamCaptureModeRelaxed));
      const absl::Status captured =
          workspace->Enqueue(models_used, configs, segments, frames, false);
      GMM_CUDA_RETURN_IF_ERROR(cudaStreamEndCapture(workspace->stream(), &graph.graph));
      GMM_RETURN_IF_ERROR(captured);
      GMM_RETURN_IF_ERROR(workspace->Wait());
      GMM_CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(&graph.exec, graph.graph, 0));
      GMM_ASSIGN_OR_RETURN(
          const double graph_us, MedianMicroseconds([&]() -> absl::Status {
            stage();
            GMM_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(graph.exec, workspace->stream()));
            GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(workspace->stream()));
            return absl::OkStatus();
          }));
      std::printf("| %zu | %d | %.1f | %.1f | %.2f |\n", num_models, windows, stream_us, graph_us,
                  graph_us / stream_us);
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace gmmscore

int main() {
  const absl::Status status = gmmscore::Run();
  if (!status.ok()) {
    std::fprintf(stderr, "cuda_launch_bench: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
