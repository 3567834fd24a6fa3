#include "kernels/cuda/cuda_gmm_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_status.h"
#include "kernels/cuda/em_stats_kernel.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<PinnedHostRange>> PinnedHostRange::Create(const void* data,
                                                                         size_t bytes) {
  void* p = const_cast<void*>(data);
  GMM_CUDA_RETURN_IF_ERROR(cudaHostRegister(p, bytes, cudaHostRegisterDefault));
  return std::unique_ptr<PinnedHostRange>(new PinnedHostRange(p));
}

PinnedHostRange::~PinnedHostRange() { (void)cudaHostUnregister(data_); }

absl::StatusOr<std::unique_ptr<CudaGmmStatistics>> CudaGmmStatistics::Create(
    const GmmModel& model, int32_t pdf, const Options& options) {
  if (options.chunk_frames < 1) return absl::InvalidArgumentError("chunk_frames must be >= 1");
  GMM_RETURN_IF_ERROR(SelectDevice(options.device));
  std::unique_ptr<CudaGmmStatistics> s(new CudaGmmStatistics());
  s->device_ = options.device;
  s->chunk_frames_ = options.chunk_frames;
  GMM_RETURN_IF_ERROR(s->SetModel(model, pdf));
  const size_t dim = size_t(s->dim_);
  GMM_RETURN_IF_ERROR(CheckDeviceRoom(
      options.device, int64_t(size_t(options.chunk_frames) * (2 * dim + 1) * sizeof(float)),
      absl::StrCat("buffers for ", options.chunk_frames, " frames need")));
  for (auto& chunk : s->chunk_) {
    GMM_ASSIGN_OR_RETURN(chunk, DeviceArray<float>::Allocate(size_t(options.chunk_frames) * dim));
  }
  GMM_ASSIGN_OR_RETURN(s->lse_, DeviceArray<float>::Allocate(size_t(options.chunk_frames)));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s->compute_, cudaStreamNonBlocking));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s->copy_, cudaStreamNonBlocking));
  for (int i = 0; i < 2; ++i) {
    GMM_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&s->copied_[i], cudaEventDisableTiming));
    GMM_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&s->consumed_[i], cudaEventDisableTiming));
  }
  return s;
}

absl::Status CudaGmmStatistics::SetModel(const GmmModel& model, int32_t pdf) {
  if (pdf < 0 || pdf >= model.num_states()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pdf ", pdf, " is not in the model (", model.num_states(), " pdfs)"));
  }
  if (model.dim() > kMaxEmDim) {
    return absl::InvalidArgumentError(absl::StrCat("the GPU statistics take dimensions up to ",
                                                   kMaxEmDim, ", the model has ", model.dim()));
  }
  if (dim_ != 0 && model.dim() != dim_) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model's dimension ", model.dim(), " is not the frames' ", dim_));
  }
  GMM_RETURN_IF_ERROR(SelectDevice(device_));
  if (compute_ != nullptr) GMM_RETURN_IF_ERROR(Synchronize());
  pdf_ = pdf;
  dim_ = model.dim();
  num_gauss_ = model.num_gauss_in(pdf);
  padded_gauss_ = (num_gauss_ + kEmGaussPad - 1) / kEmGaussPad * kEmGaussPad;
  const size_t dim = size_t(dim_), padded = size_t(padded_gauss_);
  // Parameters, Gaussian-major; the padding takes no posterior (log_norm -inf).
  std::vector<float> mean(padded * dim, 0.0f), inv_var(padded * dim, 1.0f),
      log_norm(padded, -std::numeric_limits<float>::infinity());
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  const uint32_t begin = model.gauss_begin(pdf);
  means_.resize(size_t(num_gauss_) * dim);
  for (int32_t k = 0; k < num_gauss_; ++k) {
    double log_det = 0.0;
    for (size_t d = 0; d < dim; ++d) {
      const double var = model.variance(begin + k)[d];
      mean[k * dim + d] = model.mean(begin + k)[d];
      means_[k * dim + d] = model.mean(begin + k)[d];
      inv_var[k * dim + d] = static_cast<float>(1.0 / var);
      log_det += std::log(var);
    }
    log_norm[size_t(k)] =
        static_cast<float>(model.log_weight(begin + k) - 0.5 * (double(dim) * log_2pi + log_det));
  }
  mean_ = DeviceArray<float>();
  inv_var_ = DeviceArray<float>();
  log_norm_ = DeviceArray<float>();
  sums_ = DeviceArray<double>();
  GMM_RETURN_IF_ERROR(CheckDeviceRoom(device_,
                                      int64_t(padded * (2 * dim + 1) * sizeof(float) +
                                              (padded * (2 * dim + 1) + 1) * sizeof(double)),
                                      "the GMM and its statistics need"));
  GMM_ASSIGN_OR_RETURN(mean_, UploadToDevice(mean));
  GMM_ASSIGN_OR_RETURN(inv_var_, UploadToDevice(inv_var));
  GMM_ASSIGN_OR_RETURN(log_norm_, UploadToDevice(log_norm));
  GMM_ASSIGN_OR_RETURN(sums_, DeviceArray<double>::Allocate(padded * (2 * dim + 1) + 1));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemset(sums_.get(), 0, sums_.bytes()));
  frames_ = 0;
  // Enough blocks for every multiprocessor a few times over, whatever the number of Gaussians.
  int sms = 1;
  GMM_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device_));
  splits_ = std::max(1, 4 * sms / std::max(1, padded_gauss_ / 64));
  return absl::OkStatus();
}

CudaGmmStatistics::~CudaGmmStatistics() {
  (void)SelectDevice(device_);
  if (compute_ != nullptr) (void)cudaStreamSynchronize(compute_);
  if (copy_ != nullptr) (void)cudaStreamSynchronize(copy_);
  for (int i = 0; i < 2; ++i) {
    if (copied_[i] != nullptr) (void)cudaEventDestroy(copied_[i]);
    if (consumed_[i] != nullptr) (void)cudaEventDestroy(consumed_[i]);
  }
  if (compute_ != nullptr) (void)cudaStreamDestroy(compute_);
  if (copy_ != nullptr) (void)cudaStreamDestroy(copy_);
}

absl::Status CudaGmmStatistics::Launch(const float* device_frames, int32_t num_frames) {
  const size_t padded = size_t(padded_gauss_), dim = size_t(dim_);
  const EmModelView model{mean_.get(), inv_var_.get(), log_norm_.get(), padded_gauss_, dim_};
  double* sums = sums_.get();
  const EmStatsView stats{sums, sums + padded, sums + padded * (1 + dim),
                          sums + padded * (1 + 2 * dim)};
  GMM_RETURN_IF_ERROR(EmFrameLogLikes(model, device_frames, num_frames, lse_.get(),
                                      stats.total_log_like, compute_));
  GMM_RETURN_IF_ERROR(
      EmStatistics(model, device_frames, lse_.get(), num_frames, splits_, stats, compute_));
  frames_ += num_frames;
  return absl::OkStatus();
}

absl::Status CudaGmmStatistics::AccumulateHost(const float* frames, int64_t num_frames) {
  GMM_RETURN_IF_ERROR(SelectDevice(device_));
  const size_t dim = size_t(dim_);
  int64_t chunk = 0;
  for (int64_t first = 0; first < num_frames; first += chunk_frames_, ++chunk) {
    const int b = int(chunk % 2);
    const int32_t count = int32_t(std::min<int64_t>(chunk_frames_, num_frames - first));
    // The buffer is free once the kernels of two chunks ago have read it.
    GMM_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(copy_, consumed_[b], 0));
    GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(chunk_[b].get(), frames + size_t(first) * dim,
                                             size_t(count) * dim * sizeof(float),
                                             cudaMemcpyHostToDevice, copy_));
    GMM_CUDA_RETURN_IF_ERROR(cudaEventRecord(copied_[b], copy_));
    GMM_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(compute_, copied_[b], 0));
    GMM_RETURN_IF_ERROR(Launch(chunk_[b].get(), count));
    GMM_CUDA_RETURN_IF_ERROR(cudaEventRecord(consumed_[b], compute_));
  }
  return absl::OkStatus();
}

absl::Status CudaGmmStatistics::UploadFrames(const float* frames, int64_t num_frames) {
  GMM_RETURN_IF_ERROR(SelectDevice(device_));
  const size_t values = size_t(num_frames) * size_t(dim_);
  GMM_RETURN_IF_ERROR(CheckDeviceRoom(device_, int64_t(values * sizeof(float)),
                                      absl::StrCat(num_frames, " resident frames need")));
  resident_ = DeviceArray<float>();
  GMM_ASSIGN_OR_RETURN(resident_, DeviceArray<float>::Allocate(values));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(resident_.get(), frames, values * sizeof(float),
                                           cudaMemcpyHostToDevice, compute_));
  resident_frames_ = num_frames;
  return Synchronize();
}

absl::Status CudaGmmStatistics::AccumulateResident() {
  GMM_RETURN_IF_ERROR(SelectDevice(device_));
  for (int64_t first = 0; first < resident_frames_; first += chunk_frames_) {
    const int32_t count = int32_t(std::min<int64_t>(chunk_frames_, resident_frames_ - first));
    GMM_RETURN_IF_ERROR(Launch(resident_.get() + size_t(first) * size_t(dim_), count));
  }
  return absl::OkStatus();
}

std::string CudaGmmStatistics::label() const { return DeviceLabel(device_); }

absl::Status CudaGmmStatistics::Synchronize() {
  GMM_RETURN_IF_ERROR(SelectDevice(device_));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(copy_));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(compute_));
  return absl::OkStatus();
}

absl::Status CudaGmmStatistics::AddTo(GmmStats* stats) {
  if (stats->dim != dim_ || stats->num_gauss_in(pdf_) != num_gauss_) {
    return absl::InvalidArgumentError("the statistics are not shaped like the model on the GPU");
  }
  GMM_RETURN_IF_ERROR(Synchronize());
  std::vector<double> sums(sums_.size());
  GMM_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(sums.data(), sums_.get(), sums_.bytes(), cudaMemcpyDeviceToHost));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemset(sums_.get(), 0, sums_.bytes()));
  const size_t padded = size_t(padded_gauss_), dim = size_t(dim_);
  const double* occ = sums.data();
  const double* s1 = occ + padded;
  const double* s2 = s1 + padded * dim;
  const size_t begin = stats->gauss_begin[pdf_];
  const bool means = (stats->flags & kGmmMeans) != 0,
             variances = (stats->flags & kGmmVariances) != 0;
  // The centred sums about mu back to Kaldi's: sum x = s1 + occ mu,
  // sum x^2 = s2 + 2 mu s1 + occ mu^2.
  for (size_t k = 0; k < size_t(num_gauss_); ++k) {
    stats->occupancy[begin + k] += occ[k];
    for (size_t d = 0; d < dim; ++d) {
      const size_t i = k * dim + d;
      const double mu = means_[i];
      if (means) stats->first[(begin + k) * dim + d] += s1[i] + occ[k] * mu;
      if (variances)
        stats->second[(begin + k) * dim + d] += s2[i] + mu * (2.0 * s1[i] + occ[k] * mu);
    }
  }
  stats->total_log_like += s2[padded * dim];
  stats->total_frames += double(frames_);
  frames_ = 0;
  return absl::OkStatus();
}

}  // namespace gmmscore
