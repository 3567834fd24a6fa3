#include "kernels/cpu/simd_kernel.h"

#include <cpuid.h>

#include <algorithm>
#include <cmath>

#include "kernels/cpu/packed_model.h"

// Highway re-includes this file once per SIMD target: foreach_target.h must come first.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/simd_kernel.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/contrib/math/math-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace gmmscore {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

static_assert(kGaussGroup == 4, "the unrolled kernel below scores 4 Gaussians at a time");

// Dot products of one group of 4 Gaussians with 4 vectors of frames starting at frame f0.
template <class D>
HWY_INLINE void GroupChunk(D d, const TileBlockJob& job, const float* HWY_RESTRICT p,
                           const float* HWY_RESTRICT k, size_t f0, float* HWY_RESTRICT out) {
  using V = hn::Vec<D>;
  const size_t L = hn::Lanes(d);
  V a00 = hn::Zero(d), a01 = hn::Zero(d), a02 = hn::Zero(d), a03 = hn::Zero(d);
  V a10 = hn::Zero(d), a11 = hn::Zero(d), a12 = hn::Zero(d), a13 = hn::Zero(d);
  V a20 = hn::Zero(d), a21 = hn::Zero(d), a22 = hn::Zero(d), a23 = hn::Zero(d);
  V a30 = hn::Zero(d), a31 = hn::Zero(d), a32 = hn::Zero(d), a33 = hn::Zero(d);
  const float* HWY_RESTRICT x = job.frames + f0;
  for (int32_t dd = 0; dd < job.dim; ++dd, x += 2 * kFrameBlock, p += 2 * kGaussGroup) {
    const V x0 = hn::Load(d, x), x1 = hn::Load(d, x + L), x2 = hn::Load(d, x + 2 * L),
            x3 = hn::Load(d, x + 3 * L);
    const float* HWY_RESTRICT xs = x + kFrameBlock;
    const V y0 = hn::Load(d, xs), y1 = hn::Load(d, xs + L), y2 = hn::Load(d, xs + 2 * L),
            y3 = hn::Load(d, xs + 3 * L);
#define GMM_GAUSS_ROW(j)                                     \
  {                                                          \
    const V u = hn::Set(d, p[j]);                            \
    const V v = hn::Set(d, p[kGaussGroup + j]);              \
    a##j##0 = hn::MulAdd(y0, v, hn::MulAdd(x0, u, a##j##0)); \
    a##j##1 = hn::MulAdd(y1, v, hn::MulAdd(x1, u, a##j##1)); \
    a##j##2 = hn::MulAdd(y2, v, hn::MulAdd(x2, u, a##j##2)); \
    a##j##3 = hn::MulAdd(y3, v, hn::MulAdd(x3, u, a##j##3)); \
  }
    GMM_GAUSS_ROW(0)
    GMM_GAUSS_ROW(1)
    GMM_GAUSS_ROW(2)
    GMM_GAUSS_ROW(3)
#undef GMM_GAUSS_ROW
  }
#define GMM_STORE_ROW(j)                                  \
  {                                                       \
    const V kj = hn::Set(d, k[j]);                        \
    float* HWY_RESTRICT row = out + j * kFrameBlock + f0; \
    hn::Store(hn::Add(a##j##0, kj), d, row);              \
    hn::Store(hn::Add(a##j##1, kj), d, row + L);          \
    hn::Store(hn::Add(a##j##2, kj), d, row + 2 * L);      \
    hn::Store(hn::Add(a##j##3, kj), d, row + 3 * L);      \
  }
  GMM_STORE_ROW(0)
  GMM_STORE_ROW(1)
  GMM_STORE_ROW(2)
  GMM_STORE_ROW(3)
#undef GMM_STORE_ROW
}

// log sum_r exp(rows[r * stride]) per lane, for the lanes starting at `first`: max first, so
// every exp argument is <= 0 and the sum is >= 1.
template <class D>
HWY_INLINE hn::Vec<D> LogSumExpRows(D d, const float* HWY_RESTRICT first, size_t num_rows,
                                    size_t stride) {
  auto best = hn::LoadU(d, first);
  for (size_t r = 1; r < num_rows; ++r) best = hn::Max(best, hn::LoadU(d, first + r * stride));
  auto sum = hn::Zero(d);
  for (size_t r = 0; r < num_rows; ++r) {
    sum = hn::Add(sum, hn::Exp(d, hn::Sub(hn::LoadU(d, first + r * stride), best)));
  }
  return hn::Add(best, hn::Log(d, sum));
}

// The per-state log-add over the tile's Gaussian scores, per frame lane.
template <class D>
HWY_INLINE void LogAddStates(D d, const TileBlockJob& job) {
  for (int32_t s = 0; s < job.num_states; ++s) {
    const float* first = job.gauss_scores + size_t(job.state_begin[s]) * kFrameBlock;
    const size_t rows = job.state_begin[s + 1] - job.state_begin[s];
    float* out = job.state_scores + size_t(s) * kFrameBlock;
    for (size_t f = 0; f < kFrameBlock; f += hn::Lanes(d)) {
      hn::Store(LogSumExpRows(d, first + f, rows, kFrameBlock), d, out + f);
    }
  }
}

void ScoreTileBlockImpl(const TileBlockJob& job) {
  const hn::CappedTag<float, kFrameBlock / 4> d;
  const size_t chunk = 4 * hn::Lanes(d);
  const size_t group_floats = size_t(job.dim) * 2 * kGaussGroup;
  for (int32_t g = 0; g < job.num_groups; ++g) {
    const float* p = job.params + g * group_floats;
    float* out = job.gauss_scores + size_t(g) * kGaussGroup * kFrameBlock;
    for (size_t f0 = 0; f0 < kFrameBlock; f0 += chunk) {
      GroupChunk(d, job, p, job.gconst + g * kGaussGroup, f0, out);
    }
  }
  LogAddStates(d, job);
}

void ScoreOutlierBlockImpl(const OutlierBlockJob& job) {
  const hn::CappedTag<float, kFrameBlock> d;
  for (int32_t o = 0; o < job.num_outliers; ++o) {
    const float* HWY_RESTRICT mu = job.params + size_t(o) * 2 * job.dim;
    const float* HWY_RESTRICT v = mu + job.dim;
    float* HWY_RESTRICT out = job.state_scores + size_t(job.local_state[o]) * kFrameBlock;
    const auto l = hn::Set(d, job.lconst[o]);
    for (size_t f = 0; f < kFrameBlock; f += hn::Lanes(d)) {
      auto acc = hn::Zero(d);
      for (int32_t dd = 0; dd < job.dim; ++dd) {
        const auto diff =
            hn::Sub(hn::Load(d, job.frames + size_t(dd) * kFrameBlock + f), hn::Set(d, mu[dd]));
        acc = hn::MulAdd(hn::Mul(diff, diff), hn::Set(d, v[dd]), acc);
      }
      const auto score = hn::Add(acc, l);
      const auto before = hn::Load(d, out + f);
      const auto best = hn::Max(before, score);
      const auto sum = hn::Add(hn::Exp(d, hn::Sub(before, best)), hn::Exp(d, hn::Sub(score, best)));
      hn::Store(hn::Add(best, hn::Log(d, sum)), d, out + f);
    }
  }
}

// GuardFires, vectorised over frames.
bool GuardTileBlockImpl(const float* HWY_RESTRICT state_scores, int32_t num_states,
                        const StateGuard* HWY_RESTRICT guards, float gamma,
                        uint64_t* HWY_RESTRICT fired) {
  const hn::CappedTag<float, kFrameBlock> d;
  const size_t L = hn::Lanes(d);
  bool any = false;
  for (int32_t s = 0; s < num_states; ++s) {
    const StateGuard& g = guards[s];
    const auto l_max = hn::Set(d, g.l_max);
    const auto fixed = hn::Set(d, gamma * (g.c_max + kGuardTailNats) + 0x1p-23f * g.abs_l_max);
    uint64_t bits = 0;
    for (size_t f = 0; f < kFrameBlock; f += L) {
      const auto score = hn::Load(d, state_scores + size_t(s) * kFrameBlock + f);
      const auto bound =
          hn::MulAdd(hn::Set(d, gamma), hn::Max(hn::Zero(d), hn::Sub(l_max, score)), fixed);
      const auto allowance =
          hn::Mul(hn::Set(d, 0.9f),
                  hn::Max(hn::Set(d, 1e-3f), hn::Mul(hn::Set(d, 0x1p-19f), hn::Abs(score))));
      const auto mask = hn::Gt(bound, allowance);
      if (!hn::AllFalse(d, mask)) {
        uint8_t mask_bits[8] = {};
        hn::StoreMaskBits(d, mask, mask_bits);
        uint64_t lanes = 0;
        for (size_t i = 0; i < (L + 7) / 8; ++i) lanes |= uint64_t(mask_bits[i]) << (8 * i);
        bits |= lanes << f;
      }
    }
    fired[s] = bits;
    any |= bits != 0;
  }
  return any;
}

void LogAddRowsImpl(const float* HWY_RESTRICT rows, int32_t num_rows, size_t stride,
                    int32_t num_frames, float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> d;
  const size_t L = hn::Lanes(d);
  size_t f = 0;
  for (; f + L <= size_t(num_frames); f += L) {
    hn::StoreU(LogSumExpRows(d, rows + f, size_t(num_rows), stride), d, out + f);
  }
  for (; f < size_t(num_frames); ++f) {  // tail, scalar
    float best = rows[f];
    for (int32_t r = 1; r < num_rows; ++r) best = std::max(best, rows[r * stride + f]);
    float sum = 0.0f;
    for (int32_t r = 0; r < num_rows; ++r) sum += std::exp(rows[r * stride + f] - best);
    out[f] = best + std::log(sum);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace gmmscore
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace gmmscore {
namespace {

// The run-time choice of target is made here rather than by Highway's HWY_DYNAMIC_DISPATCH: that
// lives in libhwy, whose loading measures the timer for milliseconds, in every process that links
// it, before main. A target is usable where the CPU (and the OS, for the AVX state) has every
// feature its code is compiled for (hwy/ops/set_macros-inl.h, HWY_TARGET_STR_*).
struct Kernels {
  const char* name;
  void (*score_tile_block)(const TileBlockJob&);
  void (*score_outlier_block)(const OutlierBlockJob&);
  bool (*guard_tile_block)(const float*, int32_t, const StateGuard*, float, uint64_t*);
  void (*log_add_rows)(const float*, int32_t, size_t, int32_t, float*);
};

#define GMMSCORE_KERNELS(TARGET, NAME)                                 \
  Kernels {                                                            \
    NAME, &TARGET::ScoreTileBlockImpl, &TARGET::ScoreOutlierBlockImpl, \
        &TARGET::GuardTileBlockImpl, &TARGET::LogAddRowsImpl           \
  }

// F16C by CPUID (leaf 1, ECX bit 29): clang's __builtin_cpu_supports does not know "f16c".
[[maybe_unused]] bool HasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}
[[maybe_unused]] bool HasSsse3() {
  return __builtin_cpu_supports("sse2") && __builtin_cpu_supports("ssse3");
}
[[maybe_unused]] bool HasSse4() {
  return HasSsse3() && __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("sse4.2") &&
         __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("aes");
}
[[maybe_unused]] bool HasAvx2() {
  return HasSse4() && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
         __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("fma") && HasF16c();
}
[[maybe_unused]] bool HasAvx3() {
  return HasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
}

const Kernels& Chosen() {
  static const Kernels chosen = [] {
    __builtin_cpu_init();
#if HWY_TARGETS & HWY_AVX3
    if (HasAvx3()) return GMMSCORE_KERNELS(N_AVX3, "AVX3");
#endif
#if HWY_TARGETS & HWY_AVX2
    if (HasAvx2()) return GMMSCORE_KERNELS(N_AVX2, "AVX2");
#endif
#if HWY_TARGETS & HWY_SSE4
    if (HasSse4()) return GMMSCORE_KERNELS(N_SSE4, "SSE4");
#endif
#if HWY_TARGETS & HWY_SSSE3
    if (HasSsse3()) return GMMSCORE_KERNELS(N_SSSE3, "SSSE3");
#endif
#if HWY_TARGETS & HWY_EMU128
    return GMMSCORE_KERNELS(N_EMU128, "EMU128");
#else
    return GMMSCORE_KERNELS(N_SCALAR, "SCALAR");
#endif
  }();
  return chosen;
}

#undef GMMSCORE_KERNELS

}  // namespace

const char* SimdTargetName() { return Chosen().name; }

void ScoreTileBlock(const TileBlockJob& job) { Chosen().score_tile_block(job); }

void ScoreOutlierBlock(const OutlierBlockJob& job) { Chosen().score_outlier_block(job); }

bool GuardTileBlock(const float* state_scores, int32_t num_states, const StateGuard* guards,
                    float gamma, uint64_t* fired) {
  return Chosen().guard_tile_block(state_scores, num_states, guards, gamma, fired);
}

void LogAddRows(const float* rows, int32_t num_rows, size_t stride, int32_t num_frames,
                float* out) {
  Chosen().log_add_rows(rows, num_rows, stride, num_frames, out);
}

}  // namespace gmmscore
#endif
