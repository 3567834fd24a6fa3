#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/common/log2_math.cuh"
#include "kernels/cuda/score/kernel_config.h"  // kMaxSplits
#include "kernels/cuda/score/simt_kernel.h"
#include "kernels/cuda/score/split_combine.h"

namespace gmmscore {
namespace {

constexpr int32_t kThreads = kGroupStates * kSimtSlices;
// A register cap of 65536 / (kThreads * kMinBlocks) = 128 a thread: the whole working set (32
// accumulators, two buffers of a quad's parameters) fits without spills and four blocks share a
// multiprocessor. Measured on an H100 (docs/PERFORMANCE.md): fewer registers spill, more leave
// too few warps.
constexpr int32_t kMinBlocks = 4;

__device__ __forceinline__ float Dot4(float4 x, float4 u, float acc) {
  acc = fmaf(x.x, u.x, acc);
  acc = fmaf(x.y, u.y, acc);
  acc = fmaf(x.z, u.z, acc);
  return fmaf(x.w, u.w, acc);
}

// One block: group blockIdx.y of the layout (cuda_packed_model.h) against kSimtBlockFrames frames
// from frame blockIdx.x * kSimtBlockFrames, for slice blockIdx.z of gridDim.z of the group's quads.
// Thread (slice, slot) scores the state in the group's slot for the slice's kSimtFrames frames, a
// quad of Gaussians at a time, all in log2 units. With one split it writes the states' scores to
// out, with several its partial log-sums to partial (split_combine.h).
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    SimtScoreKernel(const SimtModelView model, const float* __restrict__ feats,
                    const int32_t num_frames, float* __restrict__ out,
                    float* __restrict__ partial) {
  // x' then x'^2, each [chunk][kSimtBlockFrames] float4 (a chunk's frames together, read at
  // constant offsets), then the running log-sums [kSimtFrames][kThreads] float.
  extern __shared__ float4 shared[];
  const int32_t chunks = model.chunks;
  const int32_t padded_dim = 4 * chunks;
  const int64_t first_frame = int64_t(blockIdx.x) * kSimtBlockFrames;
  {
    float* xs = reinterpret_cast<float*>(shared);
    float* squares = xs + kSimtBlockFrames * padded_dim;
    for (int32_t i = threadIdx.x; i < kSimtBlockFrames * padded_dim; i += kThreads) {
      const int32_t f = i / padded_dim;
      const int32_t d = i - f * padded_dim;
      const int64_t t = first_frame + f;
      float x = 0.0f;  // padding frames and dimensions: zero, and u = v = 0 there too
      if (t < num_frames && d < model.dim) x = feats[t * model.dim + d] - model.shift[d];
      const int32_t at = ((d >> 2) * kSimtBlockFrames + f) * 4 + (d & 3);
      xs[at] = x;
      squares[at] = x * x;
    }
  }
  // The log-sums change once a quad (every chunks x 256 FMAs): shared memory, [frame][thread] so
  // that a warp's accesses hit 32 banks, frees registers for the parameters.
  float* const log_sums =
      reinterpret_cast<float*>(shared + 2 * chunks * kSimtBlockFrames) + threadIdx.x;
#pragma unroll
  for (int f = 0; f < kSimtFrames; ++f) log_sums[f * kThreads] = kPadGconst;
  __syncthreads();

  const int32_t slot = threadIdx.x % kGroupStates;
  const int32_t slice = threadIdx.x / kGroupStates;
  const int32_t group_quads =
      model.group_first_quad[blockIdx.y + 1] - model.group_first_quad[blockIdx.y];
  const int32_t per_split = (group_quads + int32_t(gridDim.z) - 1) / int32_t(gridDim.z);
  const int32_t split_begin = min(group_quads, int32_t(blockIdx.z) * per_split);
  const int32_t first_quad = model.group_first_quad[blockIdx.y] + split_begin;
  const int32_t total_chunks = (min(group_quads, split_begin + per_split) - split_begin) * chunks;
  const float4* param =
      model.params + size_t(first_quad) * chunks * kQuadSlots * kGroupStates + slot;
  // An index into gconst rather than a pointer: one register less where registers are at their cap.
  int32_t gconst_at = first_quad * kQuadGauss * kGroupStates + slot;
  const float4* my_frames = shared + slice * kSimtFrames;

  float acc[kQuadGauss][kSimtFrames];
  int32_t chunk = 0;  // of the current quad
  // One chunk (4 dimensions) of the current quad against the slice's frames; the quad's first
  // chunk starts the accumulators at K, its last log-adds them into the running sums.
  const auto step = [&](const float4(&u)[kQuadGauss], const float4(&v)[kQuadGauss]) {
    if (chunk == 0) {
#pragma unroll
      for (int j = 0; j < kQuadGauss; ++j) {
        const float k = __ldg(model.gconst + gconst_at + j * kGroupStates);
#pragma unroll
        for (int f = 0; f < kSimtFrames; ++f) acc[j][f] = k;
      }
      gconst_at += kQuadGauss * kGroupStates;
    }
    const float4* x = my_frames + chunk * kSimtBlockFrames;
    const float4* x2 = x + chunks * kSimtBlockFrames;
#pragma unroll
    for (int f = 0; f < kSimtFrames; ++f) {
      const float4 a = x[f];  // every thread of a warp reads the same word: a broadcast
      const float4 b = x2[f];
#pragma unroll
      for (int j = 0; j < kQuadGauss; ++j) acc[j][f] = Dot4(b, v[j], Dot4(a, u[j], acc[j][f]));
    }
    if (++chunk == chunks) {
      chunk = 0;
#pragma unroll
      for (int f = 0; f < kSimtFrames; ++f) {
        // log2(2^l + sum_j 2^acc_j); every operand is at least kPadGconst, so no NaN arises.
        const float l = log_sums[f * kThreads];
        float m = l;
#pragma unroll
        for (int j = 0; j < kQuadGauss; ++j) m = fmaxf(m, acc[j][f]);
        float sum = Exp2Approx(l - m);
#pragma unroll
        for (int j = 0; j < kQuadGauss; ++j) sum += Exp2Approx(acc[j][f] - m);
        log_sums[f * kThreads] = m + Log2Approx(sum);
      }
    }
  };
  const auto load = [&](float4(&u)[kQuadGauss], float4(&v)[kQuadGauss]) {
#pragma unroll
    for (int j = 0; j < kQuadGauss; ++j) {
      u[j] = __ldg(param + j * kGroupStates);
      v[j] = __ldg(param + (kQuadGauss + j) * kGroupStates);
    }
    param += kQuadSlots * kGroupStates;
  };

  // The parameters are double-buffered: the next chunk's loads are in flight while the current
  // one is computed (Algorithm 1, line 12). Unrolled by two, so that the buffers swap roles
  // without register moves; the layout has one chunk of slack for the loads past the end.
  float4 u_a[kQuadGauss], v_a[kQuadGauss], u_b[kQuadGauss], v_b[kQuadGauss];
  load(u_a, v_a);
  for (int32_t i = 0; i < total_chunks; i += 2) {
    load(u_b, v_b);
    step(u_a, v_a);
    if (i + 1 == total_chunks) break;
    load(u_a, v_a);
    step(u_b, v_b);
  }

  // Recomputed rather than kept live through the loop: registers are at their cap there.
  const int32_t my_slot = blockIdx.y * kGroupStates + threadIdx.x % kGroupStates;
  const int64_t my_first =
      int64_t(blockIdx.x) * kSimtBlockFrames + int64_t(threadIdx.x / kGroupStates) * kSimtFrames;
  if (gridDim.z > 1) {
    const int64_t num_slots = int64_t(model.num_groups) * kGroupStates;
    float* const my_partial = partial + int64_t(blockIdx.z) * num_frames * num_slots + my_slot;
#pragma unroll
    for (int f = 0; f < kSimtFrames; ++f) {
      if (my_first + f < num_frames) {
        my_partial[(my_first + f) * num_slots] = log_sums[f * kThreads];
      }
    }
    return;
  }
  const int32_t state = model.slot_state[my_slot];
  if (state < 0) return;
#pragma unroll
  for (int f = 0; f < kSimtFrames; ++f) {
    // Consecutive threads hold consecutive slots: coalesced where the sort kept states in order.
    if (my_first + f < num_frames) {
      out[(my_first + f) * model.num_states + state] = log_sums[f * kThreads] * kLn2;
    }
  }
}

}  // namespace

absl::StatusOr<SimtKernel> SimtKernel::Create(int32_t dim) {
  SimtKernel kernel;
  int device = 0;
  GMM_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  int shared_optin = 0;
  GMM_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int64_t chunks = (dim + 3) / 4;
  const int64_t shared = kSimtBlockFrames * chunks * 2 * int64_t(sizeof(float4)) +
                         int64_t(kSimtFrames) * kThreads * int64_t(sizeof(float));
  if (shared > shared_optin) {
    return absl::InvalidArgumentError(
        absl::StrCat("dimension ", dim, " is too large for the CUDA kernel: its frames need ",
                     shared, " bytes of shared memory, a block can have ", shared_optin));
  }
  const void* function = reinterpret_cast<const void*>(&SimtScoreKernel);
  if (shared > 48 * 1024) {
    // A cap, not a reservation: the same for every model, so that scorers of other dimensions
    // sharing the kernel are not affected.
    GMM_CUDA_RETURN_IF_ERROR(
        cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_optin));
  }
  kernel.shared_bytes_ = static_cast<int32_t>(shared);
  cudaFuncAttributes attributes;
  GMM_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, function));
  kernel.registers_ = attributes.numRegs;
  GMM_CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &kernel.blocks_per_sm_, function, kThreads, size_t(shared)));
  return kernel;
}

std::string SimtKernel::Summary() const {
  return absl::StrCat(kSimtFrames, " frames x ", kSimtSlices, " slices a block, ", registers_,
                      " registers a thread, ", blocks_per_sm_, " blocks per multiprocessor");
}

absl::Status SimtKernel::Launch(const SimtModelView& model, const float* feats, int32_t num_frames,
                                int32_t splits, float* split_scratch, float* out,
                                cudaStream_t stream) const {
  if (splits < 1 || splits > kMaxSplits ||
      (splits > 1 && (split_scratch == nullptr || num_frames > kSplitMaxFrames))) {
    return absl::InvalidArgumentError(
        absl::StrCat("no SIMT launch of ", num_frames, " frames in ", splits, " splits"));
  }
  if (num_frames <= 0 || model.num_groups == 0) return absl::OkStatus();
  const dim3 grid(static_cast<uint32_t>((num_frames + kSimtBlockFrames - 1) / kSimtBlockFrames),
                  static_cast<uint32_t>(model.num_groups), static_cast<uint32_t>(splits));
  SimtScoreKernel<<<grid, kThreads, size_t(shared_bytes_), stream>>>(model, feats, num_frames, out,
                                                                     split_scratch);
  GMM_RETURN_IF_ERROR(CudaStatus(cudaGetLastError(), "SimtScoreKernel launch"));
  if (splits == 1) return absl::OkStatus();
  return CombineSplits(split_scratch, splits, num_frames, model.num_groups * kGroupStates,
                       model.slot_state, model.num_states, out, stream);
}

}  // namespace gmmscore
