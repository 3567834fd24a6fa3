#include "kernels/cuda/common/cuda_device.h"

#include <cuda_runtime_api.h>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "kernels/cuda/common/cuda_status.h"

namespace gmmscore {

absl::StatusOr<int> CudaDeviceCount() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    return absl::UnavailableError(absl::StrCat("no usable CUDA device: ", cudaGetErrorName(error),
                                               " (", cudaGetErrorString(error), ")"));
  }
  if (count == 0) return absl::UnavailableError("no CUDA device present");
  return count;
}

absl::StatusOr<std::vector<int>> ParseDeviceList(const std::string& text, int count) {
  std::vector<int> devices;
  if (text == "all") {
    for (int d = 0; d < count; ++d) devices.push_back(d);
    return devices;
  }
  for (const absl::string_view part : absl::StrSplit(text, ',')) {
    int device = -1;
    if (!absl::SimpleAtoi(part, &device) || device < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--devices '", text, "': '", part, "' is not a device number (or use all)"));
    }
    if (device >= count) {
      return absl::InvalidArgumentError(absl::StrCat("--devices '", text, "': device ", device,
                                                     " requested, ", count, " present"));
    }
    if (std::find(devices.begin(), devices.end(), device) != devices.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--devices '", text, "': device ", device, " named twice"));
    }
    devices.push_back(device);
  }
  return devices;
}

absl::StatusOr<std::vector<int>> SelectCudaDevices(const std::string& text) {
  GMM_ASSIGN_OR_RETURN(const int count, CudaDeviceCount());
  return ParseDeviceList(text, count);
}

absl::Status SelectDevice(int device) {
  GMM_ASSIGN_OR_RETURN(const int count, CudaDeviceCount());
  if (device < 0 || device >= count) {
    return absl::UnavailableError(
        absl::StrCat("CUDA device ", device, " requested, ", count, " present"));
  }
  GMM_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  return absl::OkStatus();
}

std::string DeviceLabel(int device) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return absl::StrCat("cuda:", device);
  return absl::StrCat("cuda:", device, " (", prop.name, ")");
}

absl::Status CheckDeviceRoom(int device, int64_t bytes, const std::string& what, int64_t budget) {
  size_t free = 0;
  size_t total = 0;
  GMM_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free, &total));
  const int64_t available = budget > 0 ? std::min<int64_t>(budget, int64_t(free)) : int64_t(free);
  if (bytes <= available) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      what, " ", bytes, " bytes of device memory but CUDA device ", DeviceLabel(device), " has ",
      free, " bytes free of ", total,
      budget > 0 ? absl::StrCat(", and the memory budget is ", budget, " bytes") : ""));
}

}  // namespace gmmscore
