// The wire codec (proto/wire_codec.h) on the input's bytes, as packed float32, int32 and binary16
// values. Besides crashes, it aborts where the codec breaks its contract: reading and appending
// again gives the same bytes (float32, int32, every binary16 value but NaN), the vector paths
// (F16C where the CPU has it) agree bit for bit with FloatToHalf/HalfToFloat, and NaN stays NaN.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "proto/wire_codec.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

uint16_t HalfAt(std::string_view bytes, size_t i) {
  return static_cast<uint16_t>(static_cast<unsigned char>(bytes[2 * i]) |
                               (static_cast<unsigned char>(bytes[2 * i + 1]) << 8));
}

bool IsNanHalf(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace wire = gmmscore::wire;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The first byte's low bits: a prefix already in the output string (appending after it).
  const std::string prefix(size > 0 ? data[0] % 8 : 0, 'p');

  std::vector<float> floats(size / 4);
  wire::ReadFloat32(bytes, floats);
  std::string out = prefix;
  wire::AppendFloat32(floats, &out);
  Check(std::string_view(out).substr(prefix.size()) == bytes.substr(0, 4 * floats.size()));

  std::vector<int32_t> ints(size / 4);
  wire::ReadInt32(bytes, ints);
  out = prefix;
  wire::AppendInt32(ints, &out);
  Check(std::string_view(out).substr(prefix.size()) == bytes.substr(0, 4 * ints.size()));

  // binary16 -> float: the vector path against HalfToFloat, then back to the same halves.
  std::vector<float> halves(size / 2);
  wire::ReadFloat16(bytes, halves);
  out = prefix;
  wire::AppendFloat16(halves, &out);
  const std::string_view again = std::string_view(out).substr(prefix.size());
  Check(again.size() == 2 * halves.size());
  for (size_t i = 0; i < halves.size(); ++i) {
    const uint16_t h = HalfAt(bytes, i);
    const float scalar = wire::HalfToFloat(h);
    if (IsNanHalf(h)) {
      Check(std::isnan(halves[i]) && std::isnan(scalar) && IsNanHalf(HalfAt(again, i)));
    } else {
      Check(SameBits(halves[i], scalar));
      Check(HalfAt(again, i) == h);
      Check(wire::FloatToHalf(scalar) == h);
    }
  }

  // float -> binary16: the vector path against FloatToHalf on arbitrary floats (rounding,
  // subnormals, overflow to infinity).
  out.clear();
  wire::AppendFloat16(floats, &out);
  Check(out.size() == 2 * floats.size());
  for (size_t i = 0; i < floats.size(); ++i) {
    const uint16_t h = HalfAt(out, i);
    if (std::isnan(floats[i])) {
      Check(IsNanHalf(h) && IsNanHalf(wire::FloatToHalf(floats[i])));
    } else {
      Check(h == wire::FloatToHalf(floats[i]));
      // Rounding to nearest: no half lies strictly closer to the float than h.
      const float back = wire::HalfToFloat(h);
      if (std::isfinite(back)) {
        const uint16_t up = static_cast<uint16_t>(h + 1), down = static_cast<uint16_t>(h - 1);
        for (uint16_t n : {up, down}) {
          if ((n & 0x7fffu) >= 0x7c00u || ((n ^ h) & 0x8000u) != 0) continue;
          Check(std::fabs(double(wire::HalfToFloat(n)) - floats[i]) >=
                std::fabs(double(back) - floats[i]));
        }
      }
    }
  }

  // RELATIVE16 against the first value as the frame's best: what scorer.proto promises, within
  // 1/512 nat (plus float32 rounding) up to 255.99 nats below the best, saturated past that and
  // for NaN; the vector and scalar loops (lengths past and short of eight) must agree with it.
  if (!floats.empty() && std::isfinite(floats[0]) && std::fabs(floats[0]) < 1e6f) {
    const float best = floats[0];
    out.clear();
    wire::AppendRelative16(floats, best, &out);
    Check(out.size() == 2 * floats.size());
    std::vector<float> decoded(floats.size());
    wire::ReadRelative16(out, best, decoded);
    const float saturated = best - 65535.0f * wire::kRelative16Step;
    for (size_t i = 0; i < floats.size(); ++i) {
      const double below = double(best) - double(floats[i]);
      if (std::isnan(floats[i]) || below >= 255.999) {
        Check(decoded[i] == saturated || below >= 255.99);
      } else if (below <= 0) {
        Check(decoded[i] == best);
      } else if (below < 255.99) {
        Check(std::fabs(double(decoded[i]) - double(floats[i])) <=
              1.0 / 512 + 4e-7 * (std::fabs(double(best)) + 256));
      }
    }
  }
  return 0;
}
