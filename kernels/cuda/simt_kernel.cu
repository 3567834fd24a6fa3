#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/simt_kernel.h"

namespace gmmscore {
namespace {

constexpr float kLn2 = 0.6931471805599453f;
// Below this many warps a multiprocessor runs the FMA loop at less than its full rate (two warps
// per scheduler keep the FMA pipe busy while the other waits on shared memory).
constexpr double kWarpsForFullRate = 8.0;

__device__ __forceinline__ float Exp2Approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float Log2Approx(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// log2(2^l + 2^a + 2^b). The operands are at least kPadGconst, never -inf, so no NaN arises.
__device__ __forceinline__ float LogAdd3(float l, float a, float b) {
  const float m = fmaxf(l, fmaxf(a, b));
  return m + Log2Approx(Exp2Approx(l - m) + Exp2Approx(a - m) + Exp2Approx(b - m));
}

__device__ __forceinline__ float Dot4(float4 x, float4 u, float acc) {
  acc = fmaf(x.x, u.x, acc);
  acc = fmaf(x.y, u.y, acc);
  acc = fmaf(x.z, u.z, acc);
  return fmaf(x.w, u.w, acc);
}

// One block: group blockIdx.y of the layout (see cuda_packed_model.h) against kSlices x kFrames
// frames from frame blockIdx.x * kSlices * kFrames. Thread (slice, slot) scores the state in the
// group's slot for the slice's frames, two Gaussians at a time, and keeps one running log-sum
// per frame in registers.
template <int kFrames, int kSlices>
__global__ void __launch_bounds__(kGroupStates* kSlices)
    SimtScoreKernel(const SimtModelView model, const float* __restrict__ feats,
                    const int32_t num_frames, float* __restrict__ out) {
  constexpr int32_t kBlockFrames = kFrames * kSlices;
  // x' then x'^2, each [chunk][kBlockFrames] float4: one chunk's frames sit together, so the
  // inner loop reads them at constant offsets from one address.
  extern __shared__ float4 frames[];
  const int32_t chunks = model.chunks;
  const int32_t padded_dim = 4 * chunks;
  const int64_t first_frame = int64_t(blockIdx.x) * kBlockFrames;
  {
    float* xs = reinterpret_cast<float*>(frames);
    float* squares = xs + kBlockFrames * padded_dim;
    for (int32_t i = threadIdx.x; i < kBlockFrames * padded_dim; i += blockDim.x) {
      const int32_t f = i / padded_dim;
      const int32_t d = i - f * padded_dim;
      const int64_t t = first_frame + f;
      float x = 0.0f;  // padding frames and dimensions: zero, and u = v = 0 there too
      if (t < num_frames && d < model.dim) x = feats[t * model.dim + d] - model.shift[d];
      const int32_t at = ((d >> 2) * kBlockFrames + f) * 4 + (d & 3);
      xs[at] = x;
      squares[at] = x * x;
    }
  }
  __syncthreads();

  const int32_t slot = threadIdx.x % kGroupStates;
  const int32_t slice = threadIdx.x / kGroupStates;
  const int32_t first_pair = model.group_first_pair[blockIdx.y];
  const int32_t num_pairs = model.group_first_pair[blockIdx.y + 1] - first_pair;
  const float4* param =
      model.params + size_t(first_pair) * chunks * kPairSlots * kGroupStates + slot;
  const float* gconst = model.gconst + size_t(first_pair) * 2 * kGroupStates + slot;
  const float4* my_frames = frames + slice * kFrames;

  float like[kFrames];
#pragma unroll
  for (int f = 0; f < kFrames; ++f) like[f] = kPadGconst;

  // Parameters of the next chunk are loaded while the current one is computed (Algorithm 1,
  // line 12); the layout has one chunk and one pair of slack for the loads past the end.
  float4 next_u0 = __ldg(param);
  float4 next_u1 = __ldg(param + kGroupStates);
  float4 next_v0 = __ldg(param + 2 * kGroupStates);
  float4 next_v1 = __ldg(param + 3 * kGroupStates);
  float next_k0 = __ldg(gconst);
  float next_k1 = __ldg(gconst + kGroupStates);
  for (int32_t pair = 0; pair < num_pairs; ++pair) {
    float acc0[kFrames];
    float acc1[kFrames];
#pragma unroll
    for (int f = 0; f < kFrames; ++f) {
      acc0[f] = next_k0;
      acc1[f] = next_k1;
    }
    gconst += 2 * kGroupStates;
    next_k0 = __ldg(gconst);
    next_k1 = __ldg(gconst + kGroupStates);
    const float4* x = my_frames;
    for (int32_t c = 0; c < chunks; ++c, x += kBlockFrames) {
      const float4 u0 = next_u0, u1 = next_u1, v0 = next_v0, v1 = next_v1;
      param += kPairSlots * kGroupStates;
      next_u0 = __ldg(param);
      next_u1 = __ldg(param + kGroupStates);
      next_v0 = __ldg(param + 2 * kGroupStates);
      next_v1 = __ldg(param + 3 * kGroupStates);
      const float4* x2 = x + chunks * kBlockFrames;
#pragma unroll
      for (int f = 0; f < kFrames; ++f) {
        const float4 a = x[f];  // every thread of a warp reads the same word: a broadcast
        const float4 b = x2[f];
        acc0[f] = Dot4(b, v0, Dot4(a, u0, acc0[f]));
        acc1[f] = Dot4(b, v1, Dot4(a, u1, acc1[f]));
      }
    }
#pragma unroll
    for (int f = 0; f < kFrames; ++f) like[f] = LogAdd3(like[f], acc0[f], acc1[f]);
  }

  const int32_t state = model.slot_state[blockIdx.y * kGroupStates + slot];
  if (state < 0) return;
  const int64_t my_first = first_frame + slice * kFrames;
#pragma unroll
  for (int f = 0; f < kFrames; ++f) {
    // Consecutive threads hold consecutive slots: coalesced where the sort kept states in order.
    if (my_first + f < num_frames) out[(my_first + f) * model.num_states + state] = like[f] * kLn2;
  }
}

struct Variant {
  int32_t frames;
  int32_t slices;
  const void* kernel;
};

template <int kFrames, int kSlices>
Variant MakeVariant() {
  return {kFrames, kSlices, reinterpret_cast<const void*>(&SimtScoreKernel<kFrames, kSlices>)};
}

// Variant 0 serves windows of up to 8 frames; Choose weighs the others.
const std::array<Variant, SimtKernel::kNumVariants>& Variants() {
  static const std::array<Variant, SimtKernel::kNumVariants> variants = {
      MakeVariant<8, 1>(), MakeVariant<16, 1>(), MakeVariant<16, 2>(), MakeVariant<16, 4>()};
  return variants;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

absl::StatusOr<SimtKernel> SimtKernel::Create(int32_t dim) {
  SimtKernel kernel;
  int device = 0;
  GMM_CUDA_RETURN_IF_ERROR(cudaGetDevice(&device));
  GMM_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&kernel.multiprocessors_, cudaDevAttrMultiProcessorCount, device));
  int shared_optin = 0;
  GMM_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&shared_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int64_t chunks = (dim + 3) / 4;
  bool any = false;
  for (int v = 0; v < kNumVariants; ++v) {
    const Variant& variant = Variants()[v];
    const int64_t shared = int64_t(variant.frames) * variant.slices * chunks * 2 * 16;
    if (shared > shared_optin) continue;
    kernel.shared_bytes_[v] = static_cast<int32_t>(shared);
    if (shared > 48 * 1024) {
      // A cap, not a reservation: the same for every model, so scorers of other dimensions
      // sharing the kernel are not affected.
      GMM_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(
          variant.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_optin));
    }
    GMM_CUDA_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &kernel.occupancy_[v], variant.kernel, kGroupStates * variant.slices, size_t(shared)));
    any = any || kernel.occupancy_[v] > 0;
  }
  if (!any) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dimension ", dim, " is too large for the CUDA kernel: its frames need more than the ",
        shared_optin, " bytes of shared memory a block can have"));
  }
  return kernel;
}

int SimtKernel::Choose(int32_t num_frames, int32_t num_groups) const {
  if (num_frames <= Variants()[0].frames && occupancy_[0] > 0) return 0;
  // Estimated time of each variant: the busiest multiprocessor's blocks, each worth
  // frames x slices, at the rate its resident warps sustain. Ties go to more slices, whose
  // threads share each parameter load through L1.
  int best = -1;
  double best_time = std::numeric_limits<double>::infinity();
  for (int v = 0; v < kNumVariants; ++v) {
    if (occupancy_[v] == 0) continue;
    const Variant& variant = Variants()[v];
    const int64_t blocks = num_groups * CeilDiv(num_frames, variant.frames * variant.slices);
    const int64_t per_sm = CeilDiv(blocks, multiprocessors_);
    const double warps =
        double(std::min<int64_t>(per_sm, occupancy_[v])) * variant.slices * (kGroupStates / 32);
    const double time =
        double(per_sm) * variant.frames * variant.slices / std::min(1.0, warps / kWarpsForFullRate);
    if (time <= best_time) {
      best_time = time;
      best = v;
    }
  }
  return best;
}

std::string SimtKernel::VariantName(int32_t num_frames, int32_t num_groups) const {
  const Variant& variant = Variants()[Choose(num_frames, num_groups)];
  return absl::StrCat(variant.frames, "x", variant.slices);
}

absl::Status SimtKernel::Launch(const SimtModelView& model, const float* feats, int32_t num_frames,
                                float* out, cudaStream_t stream) const {
  if (num_frames <= 0 || model.num_groups == 0) return absl::OkStatus();
  const int v = Choose(num_frames, model.num_groups);
  const Variant& variant = Variants()[v];
  const dim3 grid(static_cast<uint32_t>(CeilDiv(num_frames, variant.frames * variant.slices)),
                  static_cast<uint32_t>(model.num_groups));
  const dim3 block(static_cast<uint32_t>(kGroupStates * variant.slices));
  SimtModelView model_arg = model;
  int32_t frames_arg = num_frames;
  void* args[] = {&model_arg, &feats, &frames_arg, &out};
  GMM_CUDA_RETURN_IF_ERROR(
      cudaLaunchKernel(variant.kernel, grid, block, args, size_t(shared_bytes_[v]), stream));
  return absl::OkStatus();
}

}  // namespace gmmscore
