#include "bench/cuda/cublas_two_kernel.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/cuda/cublas_status.h"
#include "bench/cuda/two_kernel_kernels.h"
#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/common/event_timing.h"

namespace gmmscore {
namespace {

// Destroys the handle however the measurement ends.
struct CublasHandle {
  CublasHandle() = default;
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle() {
    if (handle != nullptr) (void)cublasDestroy(handle);
  }
  cublasHandle_t handle = nullptr;
};

}  // namespace

absl::StatusOr<double> MeasureSgemmFlops(cudaStream_t stream) {
  constexpr int kSize = 8192;
  const size_t elements = size_t(kSize) * kSize;
  GMM_ASSIGN_OR_RETURN(DeviceArray<float> a, DeviceArray<float>::Allocate(elements));
  GMM_ASSIGN_OR_RETURN(DeviceArray<float> b, DeviceArray<float>::Allocate(elements));
  GMM_ASSIGN_OR_RETURN(DeviceArray<float> c, DeviceArray<float>::Allocate(elements));
  // Bytes of 0x3c: every operand about 0.0115, never zero (a GEMM's speed is data-independent
  // otherwise).
  GMM_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(a.get(), 0x3c, a.bytes(), stream));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(b.get(), 0x3c, b.bytes(), stream));
  CublasHandle cublas;
  GMM_CUBLAS_RETURN_IF_ERROR(cublasCreate(&cublas.handle));
  GMM_CUBLAS_RETURN_IF_ERROR(cublasSetStream(cublas.handle, stream));
  GMM_CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(cublas.handle, CUBLAS_DEFAULT_MATH));
  const float one = 1.0f;
  const float zero = 0.0f;
  const auto sgemm = [&](int) {
    return CublasStatus(cublasSgemm(cublas.handle, CUBLAS_OP_N, CUBLAS_OP_N, kSize, kSize, kSize,
                                    &one, a.get(), kSize, b.get(), kSize, &zero, c.get(), kSize),
                        "cublasSgemm");
  };
  GMM_ASSIGN_OR_RETURN(const double ms, MedianMilliseconds(stream, 1, 5, sgemm));
  return 2.0 * kSize * double(kSize) * kSize / (1e-3 * ms);
}

absl::StatusOr<std::unique_ptr<CublasTwoKernel>> CublasTwoKernel::Create(const GmmModel& model,
                                                                         int32_t max_frames) {
  std::unique_ptr<CublasTwoKernel> scorer(new CublasTwoKernel());
  const int32_t dim = model.dim();
  const int64_t num_gauss = model.num_gauss();
  scorer->dim_ = dim;
  scorer->num_states_ = model.num_states();
  scorer->num_gauss_ = num_gauss;
  scorer->max_frames_ = max_frames;

  std::vector<double> sum(dim, 0.0);
  for (int64_t g = 0; g < num_gauss; ++g) {
    for (int32_t d = 0; d < dim; ++d) sum[d] += model.mean(g)[d];
  }
  std::vector<float> shift(dim);
  for (int32_t d = 0; d < dim; ++d) shift[d] = static_cast<float>(sum[d] / double(num_gauss));

  const int64_t rows = 2 * int64_t(dim) + 1;
  std::vector<float> expanded(size_t(num_gauss * rows));
  const double half_dim_log_2pi = 0.5 * dim * std::log(2.0 * std::numbers::pi);
  for (int64_t g = 0; g < num_gauss; ++g) {
    double k = model.log_weight(g) - half_dim_log_2pi;
    for (int32_t d = 0; d < dim; ++d) {
      const double m = double(model.mean(g)[d]) - double(shift[d]);
      const double v = model.variance(g)[d];
      k -= 0.5 * (std::log(v) + m * m / v);
      expanded[size_t((1 + d) * num_gauss + g)] = static_cast<float>(m / v);
      expanded[size_t((1 + dim + d) * num_gauss + g)] = static_cast<float>(-0.5 / v);
    }
    expanded[size_t(g)] = static_cast<float>(k);
  }
  GMM_ASSIGN_OR_RETURN(scorer->expanded_model_, UploadToDevice(expanded));
  GMM_ASSIGN_OR_RETURN(scorer->gauss_begin_, UploadToDevice(model.spec().gauss_begin));
  GMM_ASSIGN_OR_RETURN(scorer->shift_, UploadToDevice(shift));
  GMM_ASSIGN_OR_RETURN(scorer->feats_, DeviceArray<float>::Allocate(size_t(max_frames) * dim));
  GMM_ASSIGN_OR_RETURN(scorer->expanded_frames_,
                       DeviceArray<float>::Allocate(size_t(max_frames * rows)));
  GMM_ASSIGN_OR_RETURN(scorer->gauss_scores_,
                       DeviceArray<float>::Allocate(size_t(max_frames * num_gauss)));
  GMM_ASSIGN_OR_RETURN(scorer->scores_,
                       DeviceArray<float>::Allocate(size_t(max_frames) * model.num_states()));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&scorer->stream_, cudaStreamNonBlocking));
  GMM_CUBLAS_RETURN_IF_ERROR(cublasCreate(&scorer->handle_));
  GMM_CUBLAS_RETURN_IF_ERROR(cublasSetStream(scorer->handle_, scorer->stream_));
  // Strict float32: the default mode uses no TF32 for SGEMM (only CUBLAS_TF32_TENSOR_OP_MATH
  // would).
  GMM_CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(scorer->handle_, CUBLAS_DEFAULT_MATH));
  return scorer;
}

CublasTwoKernel::~CublasTwoKernel() {
  if (handle_ != nullptr) (void)cublasDestroy(handle_);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
}

int64_t CublasTwoKernel::device_bytes() const {
  return int64_t(expanded_model_.bytes() + gauss_begin_.bytes() + shift_.bytes() + feats_.bytes() +
                 expanded_frames_.bytes() + gauss_scores_.bytes() + scores_.bytes());
}

absl::Status CublasTwoKernel::EnqueueDevice(const float* device_feats, int32_t frames,
                                            float* device_out) {
  if (frames <= 0 || frames > max_frames_) {
    return absl::InvalidArgumentError(absl::StrCat(frames, " frames, at most ", max_frames_));
  }
  const int32_t rows = 2 * dim_ + 1;
  GMM_RETURN_IF_ERROR(LaunchExpandFrames(device_feats, shift_.get(), frames, dim_,
                                         expanded_frames_.get(), stream_));
  const float one = 1.0f;
  const float zero = 0.0f;
  GMM_CUBLAS_RETURN_IF_ERROR(
      cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(num_gauss_), frames, rows,
                  &one, expanded_model_.get(), static_cast<int>(num_gauss_), expanded_frames_.get(),
                  rows, &zero, gauss_scores_.get(), static_cast<int>(num_gauss_)));
  return LaunchLogAddStates(gauss_scores_.get(), num_gauss_, gauss_begin_.get(), num_states_,
                            frames, device_out, stream_);
}

absl::Status CublasTwoKernel::Enqueue(const float* host_feats, int32_t frames, float* host_out) {
  if (frames <= 0 || frames > max_frames_) {
    return absl::InvalidArgumentError(absl::StrCat(frames, " frames, at most ", max_frames_));
  }
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(feats_.get(), host_feats,
                                           size_t(frames) * dim_ * sizeof(float),
                                           cudaMemcpyHostToDevice, stream_));
  GMM_RETURN_IF_ERROR(EnqueueDevice(feats_.get(), frames, scores_.get()));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host_out, scores_.get(),
                                           size_t(frames) * num_states_ * sizeof(float),
                                           cudaMemcpyDeviceToHost, stream_));
  return absl::OkStatus();
}

}  // namespace gmmscore
