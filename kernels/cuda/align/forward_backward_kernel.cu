#include <cmath>

#include "kernels/cuda/align/forward_backward_kernel.h"
#include "kernels/cuda/common/cuda_status.h"

namespace gmmscore {
namespace {

constexpr int32_t kThreads = 256;

__device__ __forceinline__ double LogAdd(double a, double b) {
  if (a == -INFINITY) return b;
  if (b == -INFINITY) return a;
  return a > b ? a + log1p(exp(b - a)) : b + log1p(exp(a - b));
}

// An arc's log-probability at a frame: -weight, plus the scaled log-likelihood of its pdf.
__device__ __forceinline__ double ArcLogProb(const DeviceForwardBackwardBatch& b, int32_t a,
                                             const float* frame) {
  const int32_t pdf = b.arc_pdf[a];
  double p = -double(b.arc_weight[a]);
  if (pdf >= 0) p += double(b.acoustic_scale) * double(frame[pdf]);
  return p;
}

// The three cost buffers of an utterance, `states` apart from `base`: a layer's emitting sums
// stay in one (em) while the epsilon rounds alternate between the other two. (Indices, not an
// array of pointers, which would live in local memory.)
__device__ __forceinline__ double* Buffer(double* base, int32_t states, int32_t i) {
  return base + int64_t(i) * states;
}

// Epsilon rounds over a layer whose emitting sums are in buf[em]: each round reads the last
// round's result and adds each state's epsilon neighbours (forward: predecessors through its
// incoming arcs; backward: successors through its outgoing ones) to the emitting sum. Returns
// the index of the buffer holding the layer.
template <bool kForward>
__device__ __forceinline__ int32_t EpsilonRounds(const DeviceForwardBackwardBatch& b, double* x,
                                                 int32_t g0, int32_t states, int32_t rounds,
                                                 int32_t em, const float* frame) {
  int32_t from = em;
  for (int32_t r = 0; r < rounds; ++r) {
    const int32_t to = (from == (em + 1) % 3) ? (em + 2) % 3 : (em + 1) % 3;
    const double* f = Buffer(x, states, from);
    double* out = Buffer(x, states, to);
    const double* e = Buffer(x, states, em);
    for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
      double sum = e[s];
      if (kForward) {
        for (int32_t a = b.in_begin[g0 + s]; a < b.in_begin[g0 + s + 1]; ++a) {
          if (b.arc_pdf[a] >= 0) continue;
          sum = LogAdd(sum, f[b.arc_source[a]] + ArcLogProb(b, a, frame));
        }
      } else {
        for (int32_t i = b.out_begin[g0 + s]; i < b.out_begin[g0 + s + 1]; ++i) {
          const int32_t a = b.out_arc[i];
          if (b.arc_pdf[a] >= 0) continue;
          sum = LogAdd(sum, ArcLogProb(b, a, frame) + f[b.arc_dest[a]]);
        }
      }
      out[s] = sum;
    }
    __syncthreads();
    from = to;
  }
  return from;
}

__global__ void ForwardBackwardKernel(const DeviceForwardBackwardBatch b) {
  const int32_t u = blockIdx.x;
  const int32_t g0 = b.state_offset[u];
  const int32_t states = b.num_states[u];
  const int32_t frames = b.num_frames[u];
  const int32_t rounds = b.epsilon_depth[u];
  const int32_t a0 = b.arc_offset[u];
  const int32_t arcs = b.in_begin[g0 + states] - a0;
  double* const x = b.scratch + 3 * int64_t(g0);
  double* alpha = b.alpha + b.alpha_offset[u];
  float* gamma = b.gamma + b.gamma_offset[u];
  const float* loglikes = b.loglikes + b.frame_offset[u] * b.num_pdfs;

  // Forward. Epsilon arcs carry no pdf: the frame does not matter to them.
  for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
    Buffer(x, states, 0)[s] = s == b.start[u] ? 0.0 : -INFINITY;
  }
  __syncthreads();
  int32_t layer = EpsilonRounds<true>(b, x, g0, states, rounds, 0, loglikes);
  for (int32_t s = threadIdx.x; s < states; s += blockDim.x) alpha[s] = Buffer(x, states, layer)[s];
  for (int32_t t = 0; t < frames; ++t) {
    const float* frame = loglikes + int64_t(t) * b.num_pdfs;
    const int32_t em = (layer + 1) % 3;
    const double* prev = Buffer(x, states, layer);
    for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
      double sum = -INFINITY;
      for (int32_t a = b.in_begin[g0 + s]; a < b.in_begin[g0 + s + 1]; ++a) {
        if (b.arc_pdf[a] < 0) continue;
        sum = LogAdd(sum, prev[b.arc_source[a]] + ArcLogProb(b, a, frame));
      }
      Buffer(x, states, em)[s] = sum;
    }
    __syncthreads();
    layer = EpsilonRounds<true>(b, x, g0, states, rounds, em, frame);
    double* kept = alpha + int64_t(t + 1) * states;
    for (int32_t s = threadIdx.x; s < states; s += blockDim.x)
      kept[s] = Buffer(x, states, layer)[s];
  }

  // The total: the last layer into the final states.
  __shared__ double partial[kThreads];
  __shared__ double total;
  {
    const double* last = alpha + int64_t(frames) * states;
    double mine = -INFINITY;
    for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
      const float f = b.final_cost[g0 + s];
      if (f != INFINITY) mine = LogAdd(mine, last[s] - double(f));
    }
    partial[threadIdx.x] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
      double sum = -INFINITY;
      for (int32_t i = 0; i < int32_t(blockDim.x); ++i) sum = LogAdd(sum, partial[i]);
      total = sum;
      b.total[u] = sum;
    }
    __syncthreads();
  }
  if (total == -INFINITY) return;

  // Backward, from the final weights; frame t's arc posteriors from alpha before it and beta
  // after it.
  for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
    const float f = b.final_cost[g0 + s];
    Buffer(x, states, 0)[s] = f != INFINITY ? -double(f) : -INFINITY;
  }
  __syncthreads();
  layer = EpsilonRounds<false>(b, x, g0, states, rounds, 0, loglikes);
  for (int32_t t = frames - 1; t >= 0; --t) {
    const float* frame = loglikes + int64_t(t) * b.num_pdfs;
    const double* after = Buffer(x, states, layer);
    const double* before = alpha + int64_t(t) * states;
    float* out = gamma + int64_t(t) * arcs;
    for (int32_t i = threadIdx.x; i < arcs; i += blockDim.x) {
      const int32_t a = a0 + i;
      float p = 0.0f;
      if (b.arc_pdf[a] >= 0) {
        p = float(
            exp(before[b.arc_source[a]] + ArcLogProb(b, a, frame) + after[b.arc_dest[a]] - total));
      }
      out[i] = p;
    }
    const int32_t em = (layer + 1) % 3;
    for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
      double sum = -INFINITY;
      for (int32_t i = b.out_begin[g0 + s]; i < b.out_begin[g0 + s + 1]; ++i) {
        const int32_t a = b.out_arc[i];
        if (b.arc_pdf[a] < 0) continue;
        sum = LogAdd(sum, ArcLogProb(b, a, frame) + after[b.arc_dest[a]]);
      }
      Buffer(x, states, em)[s] = sum;
    }
    __syncthreads();
    layer = EpsilonRounds<false>(b, x, g0, states, rounds, em, frame);
  }
}

}  // namespace

absl::Status LaunchForwardBackwardBatch(const DeviceForwardBackwardBatch& batch,
                                        cudaStream_t stream) {
  if (batch.utterances == 0) return absl::OkStatus();
  ForwardBackwardKernel<<<batch.utterances, kThreads, 0, stream>>>(batch);
  GMM_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace gmmscore
