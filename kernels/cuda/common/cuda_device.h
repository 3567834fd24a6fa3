// Choosing CUDA devices and checking they have room, before anything is allocated on them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gmmscore {

// How many CUDA devices the runtime sees; Unavailable (with the runtime's reason) when it sees
// none or cannot be used at all (no driver, a driver too old).
absl::StatusOr<int> CudaDeviceCount();

// The devices a --devices flag names: "all", or device numbers separated by commas ("0,2"), each
// below count and named once. InvalidArgument, quoting the text, for anything else.
absl::StatusOr<std::vector<int>> ParseDeviceList(const std::string& text, int count);
// ParseDeviceList against the devices present (Unavailable when there are none).
absl::StatusOr<std::vector<int>> SelectCudaDevices(const std::string& text);

// Makes device the calling thread's current device; Unavailable when there is no such device.
absl::Status SelectDevice(int device);

// "cuda:N (NAME)", for messages.
std::string DeviceLabel(int device);

// Refuses, with ResourceExhausted naming the device, what needs the bytes and what is free,
// `bytes` more on device (the current device) than it has free, or than budget when budget > 0.
// what says what the bytes are for ("the model needs", "buffers for 512 frames need").
absl::Status CheckDeviceRoom(int device, int64_t bytes, const std::string& what,
                             int64_t budget = 0);

}  // namespace gmmscore
