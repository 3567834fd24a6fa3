#include <cooperative_groups.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/cuda/align/viterbi_kernel.h"
#include "kernels/cuda/common/cuda_status.h"

namespace gmmscore {
namespace {

namespace cg = cooperative_groups;

constexpr int32_t kThreads = 256;

// The steps below are written for a group of threads that share one utterance: a thread block
// (ViterbiBatchKernel, an utterance per block) or the whole grid (ViterbiGridKernel, launched
// cooperatively, for one utterance of many states). Thread r of a group of n takes states r,
// r + n, ...; sync() separates the steps.
//
// The batch is passed by reference into forced-inline functions only: a reference to the kernel's
// parameter in a real call would put it in local memory.

// One utterance's view of the batch.
struct UtteranceView {
  int32_t g0, states, frames, rounds, start;
  double* base;  // two cost buffers of `states`
  const float* loglikes;
};

__device__ __forceinline__ UtteranceView ViewOf(const DeviceViterbiBatch& b, int32_t u) {
  UtteranceView v;
  v.g0 = b.state_offset[u];
  v.states = b.num_states[u];
  v.frames = b.num_frames[u];
  v.rounds = b.epsilon_depth[u];
  v.start = b.start[u];
  v.base = b.costs + 2 * int64_t(v.g0);
  v.loglikes = b.loglikes + b.frame_offset[u] * b.num_pdfs;
  return v;
}

// Epsilon arcs into every state, v.rounds times: each round reads `from`, writes the other buffer
// (the better of a state's own cost and its epsilon predecessors'), and the winners' arcs into
// `bp` (unless null). Returns the buffer that holds the result.
template <typename Group>
__device__ __forceinline__ double* EpsilonRounds(Group g, const DeviceViterbiBatch& b,
                                                 const UtteranceView& v, double* from,
                                                 int32_t* bp) {
  double* to = from == v.base ? v.base + v.states : v.base;
  for (int32_t r = 0; r < v.rounds; ++r) {
    for (int32_t s = int32_t(g.thread_rank()); s < v.states; s += int32_t(g.size())) {
      double best = from[s];
      for (int32_t a = b.in_begin[v.g0 + s]; a < b.in_begin[v.g0 + s + 1]; ++a) {
        if (b.arc_pdf[a] >= 0) continue;
        const double cost = double(b.arc_weight[a]) + from[b.arc_source[a]];
        if (cost < best) {
          best = cost;
          if (bp != nullptr) bp[s] = a;
        }
      }
      to[s] = best;
    }
    g.sync();
    double* swap = from;
    from = to;
    to = swap;
  }
  return from;
}

// The start layer: cost 0 at the start state, its epsilon closure; back-pointers into `layer0`.
template <typename Group>
__device__ __forceinline__ double* StartLayer(Group g, const DeviceViterbiBatch& b,
                                              const UtteranceView& v, int32_t* layer0) {
  for (int32_t s = int32_t(g.thread_rank()); s < v.states; s += int32_t(g.size())) {
    v.base[s] = s == v.start ? 0.0 : INFINITY;
    layer0[s] = -1;
  }
  g.sync();
  return EpsilonRounds(g, b, v, v.base, layer0);
}

// Frame t: the emitting arcs from `cur`, then the epsilon rounds; the winning arcs into `layer`
// unless null. Returns the buffer holding the frame's costs.
template <typename Group>
__device__ __forceinline__ double* Frame(Group g, const DeviceViterbiBatch& b,
                                         const UtteranceView& v, int32_t t, double* cur,
                                         int32_t* layer) {
  const float* frame = v.loglikes + int64_t(t) * b.num_pdfs;
  double* next = cur == v.base ? v.base + v.states : v.base;
  for (int32_t s = int32_t(g.thread_rank()); s < v.states; s += int32_t(g.size())) {
    double best = INFINITY;
    int32_t arg = -1;
    for (int32_t a = b.in_begin[v.g0 + s]; a < b.in_begin[v.g0 + s + 1]; ++a) {
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
    if (layer != nullptr) layer[s] = arg;
  }
  g.sync();
  return EpsilonRounds(g, b, v, next, layer);
}

// The better of two (cost, state) candidates: the lower cost, then the lower-numbered state.
__device__ __forceinline__ bool Better(double cost, int32_t state, double than_cost,
                                       int32_t than_state) {
  return cost < than_cost ||
         (cost == than_cost && state >= 0 && (than_state < 0 || state < than_state));
}

// The block's best (cost, state) in thread 0 of the block.
__device__ __forceinline__ void BlockBest(double* cost, int32_t* state) {
  __shared__ double best_cost[kThreads];
  __shared__ int32_t best_state[kThreads];
  best_cost[threadIdx.x] = *cost;
  best_state[threadIdx.x] = *state;
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (int32_t i = 1; i < int32_t(blockDim.x); ++i) {
    if (Better(best_cost[i], best_state[i], *cost, *state)) {
      *cost = best_cost[i];
      *state = best_state[i];
    }
  }
}

// The lowest final cost over the group (the lowest-numbered state on a tie), in the group's
// thread 0. A grid reduces its blocks' bests through b.block_best_*.
template <typename Group>
__device__ __forceinline__ void BestFinal(Group g, const DeviceViterbiBatch& b,
                                          const UtteranceView& v, const double* cur,
                                          double* cost_out, int32_t* state_out) {
  double cost = INFINITY;
  int32_t state = -1;
  for (int32_t s = int32_t(g.thread_rank()); s < v.states; s += int32_t(g.size())) {
    const double c = cur[s] + double(b.final_cost[v.g0 + s]);
    if (Better(c, s, cost, state)) {
      cost = c;
      state = s;
    }
  }
  BlockBest(&cost, &state);
  if constexpr (std::is_same_v<Group, cg::grid_group>) {
    if (threadIdx.x == 0) {
      b.block_best_cost[blockIdx.x] = cost;
      b.block_best_state[blockIdx.x] = state;
    }
    g.sync();
    if (g.thread_rank() != 0) return;
    for (int32_t i = 1; i < int32_t(gridDim.x); ++i) {
      if (Better(b.block_best_cost[i], b.block_best_state[i], cost, state)) {
        cost = b.block_best_cost[i];
        state = b.block_best_state[i];
      }
    }
  }
  *cost_out = cost;
  *state_out = state;
}

// Every frame of utterance u, then its traceback. The back-pointers of a segment of K =
// segment_frames frames are held at a time: layer i of the segment buffer is the segment's frame
// i - 1 (layer 0: the start layer, in the first segment). The forward pass keeps the last
// segment's back-pointers and each later segment's starting costs (checkpoints); the traceback
// goes through the segments from the last, recomputing each earlier one from its checkpoint. With
// K >= frames there is one segment and nothing is recomputed. The traceback itself is the group's
// thread 0's.
template <typename Group>
__device__ __forceinline__ void AlignUtterance(Group g, const DeviceViterbiBatch& b, int32_t u) {
  const UtteranceView v = ViewOf(b, u);
  const int32_t k = b.segment_frames[u];
  const int32_t segments = v.frames == 0 ? 1 : (v.frames + k - 1) / k;
  int32_t* const seg = b.backpointers + b.backpointer_offset[u];
  double* const checkpoints = b.checkpoints + b.checkpoint_offset[u];
  const int32_t last_first = (segments - 1) * k;
  const int32_t rank = int32_t(g.thread_rank()), size = int32_t(g.size());

  double* cur = StartLayer(g, b, v, seg);
  for (int32_t t = 0; t < v.frames; ++t) {
    if (t > 0 && t % k == 0) {
      double* saved = checkpoints + int64_t(t / k - 1) * v.states;
      for (int32_t s = rank; s < v.states; s += size) saved[s] = cur[s];
    }
    cur = Frame(g, b, v, t, cur,
                t >= last_first ? seg + int64_t(t - last_first + 1) * v.states : nullptr);
  }

  double final_cost = INFINITY;
  int32_t s = -1;
  BestFinal(g, b, v, cur, &final_cost, &s);
  // Whether a final state was reached, for every thread of the group.
  int32_t* const traced = b.traced + u;
  if (rank == 0) *traced = s >= 0 && final_cost < INFINITY ? 1 : 0;
  g.sync();
  if (*traced == 0) {
    if (rank == 0) b.reached_final[u] = 0;
    return;
  }
  int32_t* alignment = b.alignments + b.frame_offset[u];
  int32_t t = v.frames;  // thread 0's position: layer t, state s
  for (int32_t j = segments - 1; j >= 0; --j) {
    const int32_t first = j * k;
    if (j < segments - 1) {  // recompute segment j's back-pointers from its checkpoint
      g.sync();              // thread 0 is done with the buffer
      double* c = v.base;
      if (j == 0) {
        c = StartLayer(g, b, v, seg);
      } else {
        const double* saved = checkpoints + int64_t(j - 1) * v.states;
        for (int32_t i = rank; i < v.states; i += size) c[i] = saved[i];
        g.sync();
      }
      for (int32_t f = first; f < first + k; ++f) {
        c = Frame(g, b, v, f, c, seg + int64_t(f - first + 1) * v.states);
      }
    }
    if (rank != 0) continue;
    // Each step consumes a frame or follows an epsilon arc within one; a path of epsilon arcs is
    // shorter than the number of states. Segment j > 0 ends at its first layer, which is the
    // last of segment j - 1.
    for (int64_t steps = 0; steps <= int64_t(k + 1) * (v.states + 1); ++steps) {
      if (j > 0 && t == first) break;
      const int32_t a = seg[int64_t(t - first) * v.states + s];
      if (a < 0) break;
      if (b.arc_pdf[a] >= 0) {
        --t;
        alignment[t] = b.arc_tid[a];
        b.frame_loglikes[b.frame_offset[u] + t] =
            v.loglikes[int64_t(t) * b.num_pdfs + b.arc_pdf[a]];
      }
      s = b.arc_source[a];
    }
  }
  if (rank != 0) return;
  b.reached_final[u] = t == 0 && s == v.start ? 1 : 0;
  b.scores[u] = float(-final_cost);
}

// Utterance blockIdx.x of the batch's block-sized ones, by its thread block.
__global__ void ViterbiBatchKernel(const DeviceViterbiBatch b) {
  const int32_t u = b.block_utterances[blockIdx.x];
  AlignUtterance(cg::this_thread_block(), b, u);
}

// Utterance u by the whole grid (a cooperative launch).
__global__ void ViterbiGridKernel(const DeviceViterbiBatch b, int32_t u) {
  AlignUtterance(cg::this_grid(), b, u);
}

}  // namespace

absl::Status LaunchViterbiBatch(const DeviceViterbiBatch& batch,
                                const std::vector<int32_t>& grid_utterances, int32_t grid_blocks,
                                cudaStream_t stream) {
  if (batch.num_block_utterances > 0) {
    ViterbiBatchKernel<<<batch.num_block_utterances, kThreads, 0, stream>>>(batch);
    GMM_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  }
  for (int32_t u : grid_utterances) {
    DeviceViterbiBatch b = batch;
    void* args[] = {&b, &u};
    GMM_CUDA_RETURN_IF_ERROR(
        cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&ViterbiGridKernel),
                                    dim3(uint32_t(grid_blocks)), dim3(kThreads), args, 0, stream));
  }
  return absl::OkStatus();
}

absl::StatusOr<int32_t> MaxViterbiGridBlocks(int device) {
  int per_sm = 0, sms = 0;
  GMM_CUDA_RETURN_IF_ERROR(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ViterbiGridKernel, kThreads, 0));
  GMM_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  int cooperative = 0;
  GMM_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  if (cooperative == 0) return 0;
  return int32_t(std::max(per_sm, 0) * sms);
}

int32_t ViterbiThreadsPerBlock() { return kThreads; }

}  // namespace gmmscore
