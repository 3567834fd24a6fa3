#include <cmath>

#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/viterbi_kernel.h"

namespace gmmscore {
namespace {

constexpr int32_t kThreads = 256;

// Epsilon arcs into every state, `rounds` times: each round reads `from`, writes `to` (the better
// of a state's own cost and its epsilon predecessors'), and the winners' arcs into `bp`.
// Returns the buffer that holds the result.
// The arrays are passed by value: a reference to the kernel's parameter would put it in local
// memory.
__device__ __forceinline__ double* EpsilonRounds(const int32_t* __restrict__ in_begin,
                                                 const int32_t* __restrict__ arc_pdf,
                                                 const int32_t* __restrict__ arc_source,
                                                 const float* __restrict__ arc_weight, int32_t g0,
                                                 int32_t states, int32_t rounds, double* from,
                                                 double* to, int32_t* bp) {
  for (int32_t r = 0; r < rounds; ++r) {
    for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
      double best = from[s];
      for (int32_t a = in_begin[g0 + s]; a < in_begin[g0 + s + 1]; ++a) {
        if (arc_pdf[a] >= 0) continue;
        const double cost = double(arc_weight[a]) + from[arc_source[a]];
        if (cost < best) {
          best = cost;
          bp[s] = a;
        }
      }
      to[s] = best;
    }
    __syncthreads();
    double* swap = from;
    from = to;
    to = swap;
  }
  return from;
}

__global__ void ViterbiBatchKernel(const DeviceViterbiBatch b) {
  const int32_t u = blockIdx.x;
  const int32_t g0 = b.state_offset[u];
  const int32_t states = b.num_states[u];
  const int32_t frames = b.num_frames[u];
  const int32_t rounds = b.epsilon_depth[u];
  // Two cost buffers of the utterance's states: the current frame's and the one being written.
  double* const base = b.costs + 2 * int64_t(g0);

  int32_t* bp = b.backpointers + b.backpointer_offset[u];
  const float* loglikes = b.loglikes + b.frame_offset[u] * b.num_pdfs;

  double* cur = base;
  for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
    cur[s] = s == b.start[u] ? 0.0 : INFINITY;
    bp[s] = -1;
  }
  __syncthreads();
  cur = EpsilonRounds(b.in_begin, b.arc_pdf, b.arc_source, b.arc_weight, g0, states, rounds, cur,
                      (cur == base ? base + states : base), bp);

  for (int32_t t = 0; t < frames; ++t) {
    int32_t* layer = bp + int64_t(t + 1) * states;
    const float* frame = loglikes + int64_t(t) * b.num_pdfs;
    double* next = (cur == base ? base + states : base);
    for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
      double best = INFINITY;
      int32_t arg = -1;
      for (int32_t a = b.in_begin[g0 + s]; a < b.in_begin[g0 + s + 1]; ++a) {
        const int32_t pdf = b.arc_pdf[a];
        if (pdf < 0) continue;
        // The CPU aligner's order of operations: (weight + previous cost) + acoustic cost.
        const float ac = -(b.acoustic_scale * frame[pdf]);
        const double cost = (double(b.arc_weight[a]) + cur[b.arc_source[a]]) + double(ac);
        if (cost < best) {
          best = cost;
          arg = a;
        }
      }
      next[s] = best;
      layer[s] = arg;
    }
    __syncthreads();
    cur = EpsilonRounds(b.in_begin, b.arc_pdf, b.arc_source, b.arc_weight, g0, states, rounds, next,
                        (next == base ? base + states : base), layer);
  }

  // The best final state (the lowest-numbered one on a tie), then the traceback, by one thread.
  __shared__ double best_cost[kThreads];
  __shared__ int32_t best_state[kThreads];
  double mine = INFINITY;
  int32_t mine_state = -1;
  for (int32_t s = threadIdx.x; s < states; s += blockDim.x) {
    const double cost = cur[s] + double(b.final_cost[g0 + s]);
    if (cost < mine) {
      mine = cost;
      mine_state = s;
    }
  }
  best_cost[threadIdx.x] = mine;
  best_state[threadIdx.x] = mine_state;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int32_t i = 1; i < blockDim.x; ++i) {
    if (best_cost[i] < best_cost[0] || (best_cost[i] == best_cost[0] && best_state[i] >= 0 &&
                                        (best_state[0] < 0 || best_state[i] < best_state[0]))) {
      best_cost[0] = best_cost[i];
      best_state[0] = best_state[i];
    }
  }
  int32_t* alignment = b.alignments + b.frame_offset[u];
  if (best_state[0] < 0 || !(best_cost[0] < INFINITY)) {
    b.reached_final[u] = 0;
    return;
  }
  int32_t s = best_state[0];
  int32_t t = frames;
  // Each step either consumes a frame or follows an epsilon arc within one; a path of epsilon arcs
  // is shorter than the number of states.
  for (int64_t steps = 0; steps <= int64_t(frames + 1) * (states + 1); ++steps) {
    const int32_t a = bp[int64_t(t) * states + s];
    if (a < 0) break;
    if (b.arc_pdf[a] >= 0) {
      --t;
      alignment[t] = b.arc_tid[a];
      b.frame_loglikes[b.frame_offset[u] + t] = loglikes[int64_t(t) * b.num_pdfs + b.arc_pdf[a]];
    }
    s = b.arc_source[a];
  }
  b.reached_final[u] = t == 0 && s == b.start[u] ? 1 : 0;
  b.scores[u] = float(-best_cost[0]);
}

}  // namespace

absl::Status LaunchViterbiBatch(const DeviceViterbiBatch& batch, cudaStream_t stream) {
  if (batch.utterances == 0) return absl::OkStatus();
  ViterbiBatchKernel<<<batch.utterances, kThreads, 0, stream>>>(batch);
  GMM_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace gmmscore
