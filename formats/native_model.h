// gmmscore's own model format: a versioned little-endian header, the parameter arrays each
// aligned to 64 bytes (so the file can be mapped and used in place), state names, the HMM in
// Kaldi's binary TransitionModel encoding, and a CRC-32 of everything after the header.
//
// Header (64 bytes): "GMMSCORE" | u32 version | u32 header bytes | i32 dim | i32 states |
// i64 Gaussians | u64 payload bytes | u32 payload CRC-32 | u32 flags | f32 variance floor | pad.
// Payload sections, in order, each padded to 64 bytes: u32 gauss_begin[states + 1],
// f32 weights[G], f32 means[G * dim], f32 variances[G * dim], then length-prefixed strings:
// source format, state names (if flag bit 1), HMM (if flag bit 0).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "model/gmm_model.h"

namespace gmmscore {

inline constexpr char kNativeMagic[8] = {'G', 'M', 'M', 'S', 'C', 'O', 'R', 'E'};
inline constexpr uint32_t kNativeVersion = 1;

absl::StatusOr<GmmModel> ReadNativeModel(const std::string& path);
absl::Status WriteNativeModel(const GmmModel& model, const std::string& path);

}  // namespace gmmscore
