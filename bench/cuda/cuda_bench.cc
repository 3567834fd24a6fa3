// cuda_bench: the CUDA scorers' kernels (SIMT, tensor-core 3xF16, 3xTF32 and 1xTF32) against
// the cuBLAS two-kernel peer, in one run on one device (the numbers docs/PERFORMANCE.md reports;
// the cases of Vaněk, Trmal, Psutka and Psutka, "Optimization of the Gaussian Mixture Model
// Evaluation on GPU", Interspeech 2011, section 5).
//
// For each model size, window and path it prints the median time per window with the host-device
// copies (CUDA events around H2D, kernels and D2H between pinned buffers), the median of the
// kernels alone, Gaussian-frames per second of both, the real-time factor at 100 frames/s, and
// the largest absolute error against the float64 reference on the first frames of a window. Each
// path of CudaScorer runs in the blocking its autotune picks for the window (printed), and
// the choice of CudaKernelMode::kAuto is printed too. The measured float32 FMA rate gives each
// case's FP32 ceiling, the measured mma.sync rates (TF32 m16n8k8, FP16 m16n8k16) the tensor
// paths' ceilings. Every iteration
// scores another of kInputSets random windows (never zeros), so no run reuses the last one's
// inputs.
//
// Usage: cuda_bench [CASES]    CASES: letters of the cases to run, e.g. "a" (default "abc")
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/cuda/cublas_two_kernel.h"
#include "bench/cuda/device_ceilings.h"
#include "kernels/cpu/reference_scorer.h"
#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/common/event_timing.h"
#include "kernels/cuda/score/cuda_resident_model.h"
#include "kernels/cuda/score/cuda_workspace.h"
#include "kernels/cuda/score/kernel_chooser.h"
#include "model/random_model.h"
#include "model/score_guard.h"

namespace gmmscore {
namespace {

constexpr int kInputSets = 8;
constexpr int kWarmup = 3;
constexpr int kIterations = 50;
// Frames checked against the float64 reference: a whole 16-frame tile of the tensor kernel.
constexpr int32_t kErrorFrames = 16;
constexpr double kFramesPerSecond = 100.0;
constexpr int32_t kAdversarialFrames = 64;

struct Case {
  const char* label;
  int32_t states;
  int32_t gauss;
  int32_t dim;
  std::vector<int32_t> windows;
};

struct Row {
  std::string label;
  std::string model;
  int32_t window = 0;
  std::string path;
  double ms = 0.0;
  double kernel_ms = 0.0;
  double gauss_frames = 0.0;    // per window
  double ceiling = 0.0;         // Gaussian-frames/s at the measured FMA rate
  double tensor_ceiling = 0.0;  // Gaussian-frames/s at the measured TF32 mma rate; 0: not tensor
  double error = 0.0;
  // The worst error on kAdversarialFrames frames built to be hard (AdversarialFeatures), as a
  // multiple of the contract's tolerance max(1e-3, 2^-19 |score|): above 1 breaks it.
  double adversarial = 0.0;
  double unguarded_kernel_ms = 0.0;  // the same kernels without the guard; 0: not measured
};

double WorstContractRatio(const float* scores, const std::vector<double>& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double ratio = std::abs(double(scores[i]) - ref[i]) / ContractTolerance(ref[i]);
    worst = std::isnan(ratio) ? INFINITY : std::max(worst, ratio);
  }
  return worst;
}

double MaxAbsError(const float* scores, const std::vector<double>& ref) {
  double worst = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double error = std::abs(double(scores[i]) - ref[i]);
    worst = std::isnan(error) ? INFINITY : std::max(worst, error);
  }
  return worst;
}

// The windows of one size: pinned for the copies-included runs, on the device for kernel-only.
struct Inputs {
  std::vector<PinnedArray<float>> host;
  std::vector<DeviceArray<float>> device;
  PinnedArray<float> host_out;
  DeviceArray<float> device_out;
  std::vector<double> reference;   // the first kErrorFrames frames of window 0
  DeviceArray<float> adversarial;  // kAdversarialFrames frames of AdversarialFeatures
  std::vector<double> adversarial_reference;
};

absl::StatusOr<Inputs> MakeInputs(const GmmModel& model, int32_t window, uint32_t seed) {
  Inputs inputs;
  const size_t floats = size_t(window) * model.dim();
  for (int i = 0; i < kInputSets; ++i) {
    const Matrix feats = RandomFeatures(window, model.dim(), 0.0f, 2.5f, seed + i);
    GMM_ASSIGN_OR_RETURN(PinnedArray<float> host, PinnedArray<float>::Allocate(floats));
    std::memcpy(host.get(), feats.data.data(), floats * sizeof(float));
    GMM_ASSIGN_OR_RETURN(DeviceArray<float> device, UploadToDevice(feats.data));
    inputs.host.push_back(std::move(host));
    inputs.device.push_back(std::move(device));
    if (i == 0) {
      Matrix first(std::min(window, kErrorFrames), model.dim());
      std::copy_n(feats.data.begin(), first.data.size(), first.data.begin());
      inputs.reference = ReferenceScores(model, first);
    }
  }
  const Matrix adversarial = AdversarialFeatures(model, kAdversarialFrames, seed);
  GMM_ASSIGN_OR_RETURN(inputs.adversarial, UploadToDevice(adversarial.data));
  inputs.adversarial_reference = ReferenceScores(model, adversarial);
  const size_t out_floats = size_t(std::max(window, kAdversarialFrames)) * model.num_states();
  GMM_ASSIGN_OR_RETURN(inputs.host_out, PinnedArray<float>::Allocate(out_floats));
  GMM_ASSIGN_OR_RETURN(inputs.device_out, DeviceArray<float>::Allocate(out_floats));
  return inputs;
}

// Times one path on one window size: enqueue_host(i) with copies, enqueue_device(i) without.
absl::StatusOr<Row> Measure(cudaStream_t stream, Inputs& inputs,
                            const std::function<absl::Status(int)>& enqueue_host,
                            const std::function<absl::Status(int)>& enqueue_device) {
  Row row;
  GMM_ASSIGN_OR_RETURN(row.ms, MedianMilliseconds(stream, kWarmup, kIterations, enqueue_host));
  GMM_ASSIGN_OR_RETURN(row.kernel_ms,
                       MedianMilliseconds(stream, kWarmup, kIterations, enqueue_device));
  std::fill_n(inputs.host_out.get(), inputs.host_out.size(), NAN);
  GMM_RETURN_IF_ERROR(enqueue_host(0));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  row.error = MaxAbsError(inputs.host_out.get(), inputs.reference);
  return row;
}

// Gaussian-frames/s the tensor kernel of config's kind could reach at the measured mma rate of
// its precision: each Gaussian-frame is 2 x 8 multiply-adds a chunk of 4 dimensions (x' u and
// x'^2 v), for each of the kind's products.
double TensorCeiling(const CudaKernelConfig& config, int32_t dim, const DeviceCeilings& ceilings) {
  if (config.kind == CudaKernelKind::kSimt) return 0.0;
  const int products = config.kind == CudaKernelKind::kTensor1xTf32 ? 1 : 3;
  const double flops =
      config.kind == CudaKernelKind::kTensor3xF16 ? ceilings.f16_flops : ceilings.tf32_flops;
  return flops / (products * 2.0 * 8.0 * ((dim + 3) / 4));
}

absl::Status RunCase(const Case& c, const DeviceCeilings& ceilings, std::vector<Row>* rows) {
  RandomModelOptions o;
  o.num_states = c.states;
  o.dim = c.dim;
  o.min_gauss = o.max_gauss = c.gauss;
  const GmmModel model = RandomModel(o, 2026u + c.gauss);
  const int32_t max_window = *std::max_element(c.windows.begin(), c.windows.end());
  CudaKernelChoice every;
  every.all_tensor_kinds = true;
  GMM_ASSIGN_OR_RETURN(const CudaResidentModel::Layouts layouts,
                       CudaResidentModel::Plan(model, every));
  GMM_ASSIGN_OR_RETURN(const std::unique_ptr<CudaResidentModel> resident,
                       CudaResidentModel::Upload(layouts, 0));
  CudaResidentModel::Layouts unguarded_layouts = layouts;
  unguarded_layouts.guard_scale = 0.0f;
  GMM_ASSIGN_OR_RETURN(const std::unique_ptr<CudaResidentModel> unguarded,
                       CudaResidentModel::Upload(unguarded_layouts, 0));
  GMM_ASSIGN_OR_RETURN(const std::unique_ptr<CudaWorkspace> workspace, CudaWorkspace::Create(0));
  GMM_RETURN_IF_ERROR(workspace->Reserve(
      {max_window, model.dim(), model.num_states(), 1, resident->SplitScratchFloats(max_window)}));
  GMM_ASSIGN_OR_RETURN(const CudaWorkspace::Borrowed buffers, workspace->Borrow());
  KernelChooser chooser(CudaKernelChoice(), max_window);
  GMM_ASSIGN_OR_RETURN(auto cublas, CublasTwoKernel::Create(model, max_window));
  std::printf(
      "case (%s): %d states x %d Gaussians x %d dims; device memory: CUDA model (every layout) "
      "%.1f MB and buffers %.1f MB, cuBLAS two-kernel %.1f MB\n",
      c.label, c.states, c.gauss, c.dim, 1e-6 * double(resident->bytes()),
      1e-6 * double(workspace->device_bytes()), 1e-6 * double(cublas->device_bytes()));
  std::printf("kernels: %s\n", resident->KernelSummary().c_str());
  std::printf(
      "guard: watches %d states after SIMT, %d after 3xF16, %d after 3xTF32, %d after "
      "1xTF32 (outliers: the model's Gaussians with c > 512)\n",
      resident->WatchedStates(CudaKernelKind::kSimt),
      resident->WatchedStates(CudaKernelKind::kTensor3xF16),
      resident->WatchedStates(CudaKernelKind::kTensor3xTf32),
      resident->WatchedStates(CudaKernelKind::kTensor1xTf32));
  for (int32_t window : c.windows) {
    GMM_ASSIGN_OR_RETURN(Inputs inputs, MakeInputs(model, window, 7u * window));
    const auto tune = [&](CudaKernelMode mode) {
      return chooser.Tune(*resident, window, mode, *workspace);
    };
    GMM_ASSIGN_OR_RETURN(const CudaKernelConfig simt, tune(CudaKernelMode::kSimt));
    GMM_ASSIGN_OR_RETURN(const CudaKernelConfig f16, tune(CudaKernelMode::kTensor));
    GMM_ASSIGN_OR_RETURN(const CudaKernelConfig tf32, tune(CudaKernelMode::kTensorTf32));
    GMM_ASSIGN_OR_RETURN(const CudaKernelConfig fast, tune(CudaKernelMode::kTensorFast));
    GMM_ASSIGN_OR_RETURN(const CudaKernelConfig chosen,
                         chooser.ConfigFor(*resident, window, *workspace));
    std::printf(
        "window %d: autotune: SIMT -> %s; 3xF16 -> %s; 3xTF32 -> %s; 1xTF32 -> %s; auto -> %s\n",
        window, ToString(simt).c_str(), ToString(f16).c_str(), ToString(tf32).c_str(),
        ToString(fast).c_str(), ToString(chosen).c_str());
    // The scorer's path: pinned frames in, the kernels, the scores out, on the workspace's stream
    // (what CudaScorer::Score enqueues); and the kernels alone, from and to device memory.
    const auto scorer_path = [&](const CudaKernelConfig& config,
                                 const char* path) -> absl::StatusOr<Row> {
      GMM_ASSIGN_OR_RETURN(
          Row row,
          Measure(
              buffers.stream, inputs,
              [&](int i) -> absl::Status {
                GMM_CUDA_RETURN_IF_ERROR(
                    cudaMemcpyAsync(buffers.feats, inputs.host[i % kInputSets].get(),
                                    size_t(window) * size_t(c.dim) * sizeof(float),
                                    cudaMemcpyHostToDevice, buffers.stream));
                GMM_RETURN_IF_ERROR(resident->Launch(config, buffers.feats, window, buffers.scores,
                                                     buffers.split_scratch, buffers.stream));
                GMM_CUDA_RETURN_IF_ERROR(
                    cudaMemcpyAsync(inputs.host_out.get(), buffers.scores,
                                    size_t(window) * size_t(c.states) * sizeof(float),
                                    cudaMemcpyDeviceToHost, buffers.stream));
                return absl::OkStatus();
              },
              [&](int i) {
                return resident->Launch(config, inputs.device[i % kInputSets].get(), window,
                                        inputs.device_out.get(), buffers.split_scratch,
                                        buffers.stream);
              }));
      row.path = path;
      row.tensor_ceiling = TensorCeiling(config, c.dim, ceilings);
      GMM_ASSIGN_OR_RETURN(row.unguarded_kernel_ms,
                           MedianMilliseconds(buffers.stream, kWarmup, kIterations, [&](int i) {
                             return unguarded->Launch(config, inputs.device[i % kInputSets].get(),
                                                      window, inputs.device_out.get(),
                                                      buffers.split_scratch, buffers.stream);
                           }));
      GMM_RETURN_IF_ERROR(resident->Launch(config, inputs.adversarial.get(), kAdversarialFrames,
                                           inputs.device_out.get(), buffers.split_scratch,
                                           buffers.stream));
      GMM_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(inputs.host_out.get(), inputs.device_out.get(),
                          size_t(kAdversarialFrames) * size_t(c.states) * sizeof(float),
                          cudaMemcpyDeviceToHost, buffers.stream));
      GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(buffers.stream));
      row.adversarial = WorstContractRatio(inputs.host_out.get(), inputs.adversarial_reference);
      return row;
    };
    GMM_ASSIGN_OR_RETURN(Row simt_row, scorer_path(simt, "SIMT fused"));
    GMM_ASSIGN_OR_RETURN(Row f16_row, scorer_path(f16, "tensor 3xF16 fused"));
    GMM_ASSIGN_OR_RETURN(Row tf32_row, scorer_path(tf32, "tensor 3xTF32 fused"));
    GMM_ASSIGN_OR_RETURN(Row cublas_row,
                         Measure(
                             cublas->stream(), inputs,
                             [&](int i) {
                               return cublas->Enqueue(inputs.host[i % kInputSets].get(), window,
                                                      inputs.host_out.get());
                             },
                             [&](int i) {
                               return cublas->EnqueueDevice(inputs.device[i % kInputSets].get(),
                                                            window, inputs.device_out.get());
                             }));
    cublas_row.path = "cuBLAS SGEMM + log-add";
    GMM_ASSIGN_OR_RETURN(Row fast_row, scorer_path(fast, "tensor 1xTF32 fused (inexact)"));
    for (Row* row : {&simt_row, &f16_row, &tf32_row, &cublas_row, &fast_row}) {
      row->label = c.label;
      row->model = absl::StrCat(c.states, "x", c.gauss, "x", c.dim);
      row->window = window;
      row->gauss_frames = double(model.num_gauss()) * window;
      row->ceiling = ceilings.fma_per_second / (2.0 * c.dim);
      rows->push_back(*row);
    }
  }
  return absl::OkStatus();
}

void PrintTable(const std::vector<Row>& rows) {
  std::printf(
      "\n| case | states x gauss x dim | window | path | ms/window (copies incl.) | kernel ms | "
      "Gauss-frames/s | kernel Gauss-frames/s | kernel / FP32 ceiling | RTF | max abs err | "
      "adversarial / tolerance | kernel ms without the guard |\n"
      "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    const double rate = r.gauss_frames / (1e-3 * r.ms);
    const double kernel_rate = r.gauss_frames / (1e-3 * r.kernel_ms);
    const double rtf = 1e-3 * r.ms / (r.window / kFramesPerSecond);
    const std::string adversarial =
        r.unguarded_kernel_ms > 0.0 ? absl::StrFormat("%.2f", r.adversarial) : "-";
    const std::string unguarded =
        r.unguarded_kernel_ms > 0.0 ? absl::StrFormat("%.4f", r.unguarded_kernel_ms) : "-";
    std::printf(
        "| (%s) | %s | %d | %s | %.4f | %.4f | %.3g | %.3g | %.0f%% | %.2e | %.1e | %s | %s |\n",
        r.label.c_str(), r.model.c_str(), r.window, r.path.c_str(), r.ms, r.kernel_ms, rate,
        kernel_rate, 100.0 * kernel_rate / r.ceiling, rtf, r.error, adversarial.c_str(),
        unguarded.c_str());
  }
  std::printf(
      "\n| case | window | path | kernel Gauss-frames/s | mma ceiling | kernel / ceiling |\n"
      "|---|---:|---|---:|---:|---:|\n");
  for (const Row& r : rows) {
    if (r.tensor_ceiling == 0.0) continue;
    const double kernel_rate = r.gauss_frames / (1e-3 * r.kernel_ms);
    std::printf("| (%s) | %d | %s | %.3g | %.3g | %.0f%% |\n", r.label.c_str(), r.window,
                r.path.c_str(), kernel_rate, r.tensor_ceiling,
                100.0 * kernel_rate / r.tensor_ceiling);
  }
}

absl::Status Run(const std::string& selected) {
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(0));
  cudaDeviceProp prop;
  GMM_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, 0));
  int clock_khz = 0;
  GMM_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  int runtime = 0;
  int driver = 0;
  GMM_CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&runtime));
  GMM_CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&driver));
  std::printf(
      "device: %s, %d multiprocessors, %.0f MHz peak clock, %.1f GiB; CUDA runtime %d, "
      "driver %d\n",
      prop.name, prop.multiProcessorCount, 1e-3 * clock_khz,
      double(prop.totalGlobalMem) / (1 << 30), runtime, driver);
  cudaStream_t stream = nullptr;
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamCreate(&stream));
  const absl::StatusOr<DeviceCeilings> ceilings = MeasureDeviceCeilings(stream);
  const absl::StatusOr<double> sgemm_flops = MeasureSgemmFlops(stream);
  (void)cudaStreamDestroy(stream);
  GMM_RETURN_IF_ERROR(ceilings.status());
  GMM_RETURN_IF_ERROR(sgemm_flops.status());
  std::printf(
      "measured: float32 FMA %.3g /s; mma.sync TF32 %.3g FLOP/s, FP16 %.3g FLOP/s; device copy "
      "%.3g B/s (read + write)\n",
      ceilings->fma_per_second, ceilings->tf32_flops, ceilings->f16_flops,
      ceilings->copy_bytes_per_second);
  std::printf(
      "measured: cuBLAS SGEMM 8192^3 (float32) %.3g FLOP/s: FP32 ceilings in Gaussian-frames/s "
      "(2 x dim FMAs each) by FMA chains / by SGEMM: dim 36 %.3g / %.3g, dim 39 %.3g / %.3g\n",
      *sgemm_flops, ceilings->fma_per_second / 72.0, *sgemm_flops / 144.0,
      ceilings->fma_per_second / 78.0, *sgemm_flops / 156.0);

  const std::vector<Case> cases = {
      {"a", 5000, 256, 36, {256}}, {"b", 5000, 16, 36, {8, 32, 256}}, {"c", 5000, 32, 39, {512}}};
  std::vector<Row> rows;
  for (const Case& c : cases) {
    if (selected.find(c.label) != std::string::npos) {
      GMM_RETURN_IF_ERROR(RunCase(c, *ceilings, &rows));
    }
  }
  PrintTable(rows);
  return absl::OkStatus();
}

}  // namespace
}  // namespace gmmscore

int main(int argc, char** argv) {
  const absl::Status status = gmmscore::Run(argc > 1 ? argv[1] : "abc");
  if (!status.ok()) {
    std::fprintf(stderr, "cuda_bench: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
