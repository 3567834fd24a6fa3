#include "proto/wire_codec.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define GMMSCORE_WIRE_F16C 1
#endif

namespace gmmscore::wire {
namespace {

constexpr bool kLittleEndianHost = std::endian::native == std::endian::little;

uint32_t SwapBytes(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}

// Appends 2- or 4-byte values little-endian; on a little-endian host this is one memcpy.
template <typename T>
void AppendLittleEndian(std::span<const T> values, std::string* out) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4);
  if (values.empty()) return;  // an empty span's data() may be null, which memcpy may not take
  const size_t at = out->size();
  out->resize(at + values.size_bytes());
  char* dst = out->data() + at;
  if constexpr (kLittleEndianHost) {
    std::memcpy(dst, values.data(), values.size_bytes());
  } else {
    using Bits = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
    for (size_t i = 0; i < values.size(); ++i) {
      const Bits v = std::bit_cast<Bits>(values[i]);
      for (size_t b = 0; b < sizeof(T); ++b) dst[sizeof(T) * i + b] = char((v >> (8 * b)) & 0xff);
    }
  }
}

template <typename T>
void Read32(std::string_view bytes, std::span<T> out) {
  static_assert(sizeof(T) == 4);
  if (out.empty()) return;
  if constexpr (kLittleEndianHost) {
    std::memcpy(out.data(), bytes.data(), out.size_bytes());
  } else {
    for (size_t i = 0; i < out.size(); ++i) {
      uint32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      out[i] = std::bit_cast<T>(SwapBytes(v));
    }
  }
}

}  // namespace

void AppendFloat32(std::span<const float> values, std::string* out) {
  AppendLittleEndian(values, out);
}
void AppendUint16(std::span<const uint16_t> values, std::string* out) {
  AppendLittleEndian(values, out);
}
void AppendInt32(std::span<const int32_t> values, std::string* out) {
  AppendLittleEndian(values, out);
}
void ReadFloat32(std::string_view bytes, std::span<float> out) { Read32(bytes, out); }
void ReadInt32(std::string_view bytes, std::span<int32_t> out) { Read32(bytes, out); }

uint16_t FloatToHalf(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // infinity or NaN (keep a mantissa bit so NaN stays NaN)
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) return sign;  // under half of the smallest subnormal (2^-25)
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14..24 for exponents 102..112
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  // Normal: rebias the exponent (127 -> 15) and round the mantissa from 23 to 10 bits; a carry
  // out of the mantissa correctly bumps the exponent.
  uint32_t half = ((abs >> 13) - (112u << 10));
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float HalfToFloat(uint16_t half) {
  const uint32_t sign = uint32_t(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    // Subnormal or zero: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

namespace {

void FloatsToHalves(const float* src, size_t n, unsigned char* dst) {
  for (size_t i = 0; i < n; ++i) {
    const uint16_t h = FloatToHalf(src[i]);
    dst[2 * i] = static_cast<unsigned char>(h & 0xffu);
    dst[2 * i + 1] = static_cast<unsigned char>(h >> 8);
  }
}

void HalvesToFloats(const unsigned char* src, size_t n, float* dst) {
  for (size_t i = 0; i < n; ++i) {
    dst[i] = HalfToFloat(static_cast<uint16_t>(src[2 * i] | (src[2 * i + 1] << 8)));
  }
}

#ifdef GMMSCORE_WIRE_F16C
// The x86 conversion instructions (F16C: eight values an instruction; little-endian like the
// wire), for what they give exactly as FloatToHalf and HalfToFloat do: every value but NaN,
// whose payload they keep. Eight floats holding a NaN go through FloatToHalf instead.
__attribute__((target("avx,f16c"))) void FloatsToHalvesF16c(const float* src, size_t n,
                                                            unsigned char* dst) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(src + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0) {
      FloatsToHalves(src + i, 8, dst + 2 * i);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i),
                       _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
  }
  FloatsToHalves(src + i, n - i, dst + 2 * i);
}

// Signalling NaN halves come out quiet here, signalling from HalfToFloat: both NaN.
__attribute__((target("avx,f16c"))) void HalvesToFloatsF16c(const unsigned char* src, size_t n,
                                                            float* dst) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  HalvesToFloats(src + 2 * i, n - i, dst + i);
}

// F16C and AVX in the processor (CPUID leaf 1) and the YMM registers saved by the OS (OSXSAVE,
// then XGETBV). CPUID itself rather than __builtin_cpu_supports, whose "f16c" clang 14 lacks.
bool HaveF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  if ((ecx & bit_F16C) == 0 || (ecx & bit_AVX) == 0 || (ecx & bit_OSXSAVE) == 0) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  return (xcr0_low & 0x6u) == 0x6u;  // SSE and AVX state
}

const bool kHaveF16c = HaveF16c();
#endif

}  // namespace

void AppendFloat16(std::span<const float> values, std::string* out) {
  const size_t at = out->size();
  out->resize(at + 2 * values.size());
  unsigned char* dst = reinterpret_cast<unsigned char*>(out->data() + at);
#ifdef GMMSCORE_WIRE_F16C
  if (kHaveF16c) {
    FloatsToHalvesF16c(values.data(), values.size(), dst);
    return;
  }
#endif
  FloatsToHalves(values.data(), values.size(), dst);
}

namespace {

void Relative16(const float* src, size_t n, float best, unsigned char* dst) {
  for (size_t i = 0; i < n; ++i) {
    const float below = (best - src[i]) * 256.0f;
    // !(below < 65534.5f) also sends a NaN to the saturated value.
    const uint32_t q = below < 65534.5f ? uint32_t(std::max(0.0f, below) + 0.5f) : 65535u;
    dst[2 * i] = static_cast<unsigned char>(q & 0xFF);
    dst[2 * i + 1] = static_cast<unsigned char>(q >> 8);
  }
}

#ifdef GMMSCORE_WIRE_F16C
// Eight values an iteration, the same numbers as Relative16 (the daemon encodes every score of
// every frame it sends; the scalar loop cost more CPU than FLOAT16's F16C path).
__attribute__((target("avx"))) void Relative16Avx(const float* src, size_t n, float best,
                                                  unsigned char* dst) {
  const __m256 vbest = _mm256_set1_ps(best), scale = _mm256_set1_ps(256.0f);
  const __m256 top = _mm256_set1_ps(65534.5f), saturated = _mm256_set1_ps(65535.0f);
  const __m256 zero = _mm256_setzero_ps(), half = _mm256_set1_ps(0.5f);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 below = _mm256_mul_ps(_mm256_sub_ps(vbest, _mm256_loadu_ps(src + i)), scale);
    // Ordered compare: false for NaN, which then saturates like values past the range.
    below = _mm256_blendv_ps(saturated, below, _mm256_cmp_ps(below, top, _CMP_LT_OQ));
    const __m256i q = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_max_ps(below, zero), half));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i),
                     _mm_packus_epi32(_mm256_castsi256_si128(q), _mm256_extractf128_si256(q, 1)));
  }
  Relative16(src + i, n - i, best, dst + 2 * i);
}
#endif

}  // namespace

void AppendRelative16(std::span<const float> values, float best, std::string* out) {
  const size_t at = out->size();
  out->resize(at + 2 * values.size());
  unsigned char* dst = reinterpret_cast<unsigned char*>(out->data() + at);
#ifdef GMMSCORE_WIRE_F16C
  if (kHaveF16c) {  // F16C implies AVX
    Relative16Avx(values.data(), values.size(), best, dst);
    return;
  }
#endif
  Relative16(values.data(), values.size(), best, dst);
}

void ReadRelative16(std::string_view bytes, float best, std::span<float> out) {
  const unsigned char* src = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0;
#ifdef GMMSCORE_WIRE_F16C
  // Eight values an iteration with SSE2 (every x86-64 has it): a client decodes every score it
  // receives, and the scalar loop cost the load generator a core at 3000 streams.
  const __m128 vbest = _mm_set1_ps(best), step = _mm_set1_ps(kRelative16Step);
  const __m128i zero = _mm_setzero_si128();
  for (; i + 8 <= out.size(); i += 8) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m128 lo = _mm_cvtepi32_ps(_mm_unpacklo_epi16(q, zero));
    const __m128 hi = _mm_cvtepi32_ps(_mm_unpackhi_epi16(q, zero));
    _mm_storeu_ps(out.data() + i, _mm_sub_ps(vbest, _mm_mul_ps(lo, step)));
    _mm_storeu_ps(out.data() + i + 4, _mm_sub_ps(vbest, _mm_mul_ps(hi, step)));
  }
#endif
  for (; i < out.size(); ++i) {
    const uint32_t q = uint32_t(src[2 * i]) | uint32_t(src[2 * i + 1]) << 8;
    out[i] = best - static_cast<float>(q) * kRelative16Step;
  }
}

void ReadFloat16(std::string_view bytes, std::span<float> out) {
  const unsigned char* src = reinterpret_cast<const unsigned char*>(bytes.data());
#ifdef GMMSCORE_WIRE_F16C
  if (kHaveF16c) {
    HalvesToFloatsF16c(src, out.size(), out.data());
    return;
  }
#endif
  HalvesToFloats(src, out.size(), out.data());
}

}  // namespace gmmscore::wire
