// Packed little-endian numbers in protobuf `bytes` fields (FeatureChunk.data, ScoreResponse.scores
// and sparse_states), and IEEE 754 binary16 for the FLOAT16 encoding. Both the daemon and the
// client library use these, so the two ends agree byte for byte on any host.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace gmmscore::wire {

// Appends values as little-endian float32 / int32 / binary16.
void AppendFloat32(std::span<const float> values, std::string* out);
void AppendInt32(std::span<const int32_t> values, std::string* out);
void AppendFloat16(std::span<const float> values, std::string* out);
// Appends 16-bit values already encoded (binary16 or RELATIVE16) as little-endian.
void AppendUint16(std::span<const uint16_t> values, std::string* out);

// Reads bytes.size() / 4 (or / 2 for binary16) values into out, which must have that size.
void ReadFloat32(std::string_view bytes, std::span<float> out);
void ReadInt32(std::string_view bytes, std::span<int32_t> out);
void ReadFloat16(std::string_view bytes, std::span<float> out);

// The RELATIVE16 encoding (scorer.proto): each value as uint16 round((best - value) * 256),
// saturating at 65535 (a NaN too); and back, best - q / 256.
inline constexpr float kRelative16Step = 1.0f / 256.0f;
void AppendRelative16(std::span<const float> values, float best, std::string* out);
void ReadRelative16(std::string_view bytes, float best, std::span<float> out);

// Round to nearest even; beyond the binary16 range gives +-infinity; NaN stays NaN.
uint16_t FloatToHalf(float value);
float HalfToFloat(uint16_t half);

}  // namespace gmmscore::wire
