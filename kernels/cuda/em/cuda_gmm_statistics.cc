#include "kernels/cuda/em/cuda_gmm_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "absl/strings/str_cat.h"
#include "kernels/cuda/common/cuda_device.h"
#include "kernels/cuda/common/cuda_status.h"
#include "kernels/cuda/em/em_stats_kernel.h"
#include "kernels/cuda/em/em_tensor_kernel.h"
#include "kernels/cuda/em/em_tensor_layout.h"

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
  if (options.resident_launch_frames < 1) {
    return absl::InvalidArgumentError("resident_launch_frames must be >= 1");
  }
  GMM_RETURN_IF_ERROR(SelectDevice(options.device));
  std::unique_ptr<CudaGmmStatistics> s(new CudaGmmStatistics());
  s->device_ = options.device;
  s->chunk_frames_ = options.chunk_frames;
  s->resident_launch_frames_ = options.resident_launch_frames;
  s->launch_capacity_ = std::max(options.chunk_frames, options.resident_launch_frames);
  s->tensor_cores_ = options.tensor_cores;
  GMM_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&s->sms_, cudaDevAttrMultiProcessorCount, options.device));
  GMM_RETURN_IF_ERROR(s->SetModel(model, pdf));
  const size_t dim = size_t(s->dim_);
  GMM_RETURN_IF_ERROR(CheckDeviceRoom(
      options.device,
      int64_t((size_t(options.chunk_frames) * 2 * dim + 2 * size_t(s->launch_capacity_)) *
              sizeof(float)),
      absl::StrCat("buffers for ", options.chunk_frames, " frames need")));
  for (auto& chunk : s->chunk_) {
    GMM_ASSIGN_OR_RETURN(chunk, DeviceArray<float>::Allocate(size_t(options.chunk_frames) * dim));
  }
  GMM_ASSIGN_OR_RETURN(s->lse_, DeviceArray<float>::Allocate(size_t(s->launch_capacity_)));
  GMM_ASSIGN_OR_RETURN(s->lse_bits_, DeviceArray<float>::Allocate(size_t(s->launch_capacity_)));
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
  const size_t dim = size_t(dim_);
  EmTensorLayout layout = BuildEmTensorLayout(model, pdf, tensor_cores_);
  exact_gauss_ = std::move(layout.exact);
  slot_gauss_ = std::move(layout.slot_gauss);
  slot_shift_ = std::move(layout.shift);
  tensor_gauss_ = num_gauss_ - int32_t(exact_gauss_.size());
  exact_padded_ = (int32_t(exact_gauss_.size()) + kEmGaussPad - 1) / kEmGaussPad * kEmGaussPad;
  const size_t slots = slot_gauss_.size(), padded = size_t(exact_padded_);
  const size_t tensor_records = slots / kEmTensorRecordGauss;  // at most a slice each

  // The exact kernels' parameters, Gaussian-major; the padding takes no posterior (log_norm -inf).
  std::vector<float> mean(padded * dim, 0.0f), inv_var(padded * dim, 1.0f),
      log_norm(padded, -std::numeric_limits<float>::infinity());
  const double log_2pi = std::log(2.0 * std::numbers::pi);
  const uint32_t begin = model.gauss_begin(pdf);
  exact_means_.resize(exact_gauss_.size() * dim);
  for (size_t k = 0; k < exact_gauss_.size(); ++k) {
    const uint32_t g = begin + uint32_t(exact_gauss_[k]);
    double log_det = 0.0;
    for (size_t d = 0; d < dim; ++d) {
      const double var = model.variance(g)[d];
      mean[k * dim + d] = model.mean(g)[d];
      exact_means_[k * dim + d] = model.mean(g)[d];
      inv_var[k * dim + d] = static_cast<float>(1.0 / var);
      log_det += std::log(var);
    }
    log_norm[k] = static_cast<float>(model.log_weight(g) - 0.5 * (double(dim) * log_2pi + log_det));
  }
  mean_ = DeviceArray<float>();
  inv_var_ = DeviceArray<float>();
  log_norm_ = DeviceArray<float>();
  params_ = DeviceArray<uint4>();
  log_sum_records_ = DeviceArray<uint4>();
  consts_ = DeviceArray<float2>();
  shift_ = DeviceArray<float>();
  column_scale_ = DeviceArray<float>();
  partial_ = DeviceArray<float2>();
  partial_capacity_ = 0;
  exact_lse_ = DeviceArray<float>();
  sums_ = DeviceArray<double>();
  const size_t num_sums = slots * size_t(EmTensorColumns(dim_)) + padded * (2 * dim + 1) + 1;
  const size_t launch = size_t(launch_capacity_);
  // A short launch splits the Gaussians into more log-sum slices than a long one: room for a
  // chunk's worth of every slice, or a whole launch's single slice (Launch caps the slices).
  const size_t partial_capacity = std::max(tensor_records * size_t(chunk_frames_), launch);
  GMM_RETURN_IF_ERROR(CheckDeviceRoom(
      device_,
      int64_t(padded * (2 * dim + 1) * sizeof(float) +
              (layout.params.size() + layout.log_sum_records.size()) * sizeof(uint32_t) +
              (layout.consts.size() + layout.shift.size() + layout.column_scale.size()) *
                  sizeof(float) +
              partial_capacity * sizeof(float2) + launch * sizeof(float) +
              num_sums * sizeof(double)),
      "the GMM and its statistics need"));
  if (padded > 0) {
    GMM_ASSIGN_OR_RETURN(mean_, UploadToDevice(mean));
    GMM_ASSIGN_OR_RETURN(inv_var_, UploadToDevice(inv_var));
    GMM_ASSIGN_OR_RETURN(log_norm_, UploadToDevice(log_norm));
  }
  if (slots > 0) {
    GMM_ASSIGN_OR_RETURN(params_, DeviceArray<uint4>::Allocate(layout.params.size() / 4));
    GMM_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(params_.get(), layout.params.data(), params_.bytes(), cudaMemcpyHostToDevice));
    GMM_ASSIGN_OR_RETURN(log_sum_records_,
                         DeviceArray<uint4>::Allocate(layout.log_sum_records.size() / 4));
    GMM_CUDA_RETURN_IF_ERROR(cudaMemcpy(log_sum_records_.get(), layout.log_sum_records.data(),
                                        log_sum_records_.bytes(), cudaMemcpyHostToDevice));
    GMM_ASSIGN_OR_RETURN(consts_, DeviceArray<float2>::Allocate(layout.consts.size() / 2));
    GMM_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(consts_.get(), layout.consts.data(), consts_.bytes(), cudaMemcpyHostToDevice));
    GMM_ASSIGN_OR_RETURN(shift_, UploadToDevice(slot_shift_));
    GMM_ASSIGN_OR_RETURN(column_scale_, UploadToDevice(layout.column_scale));
    GMM_ASSIGN_OR_RETURN(partial_, DeviceArray<float2>::Allocate(partial_capacity));
    partial_capacity_ = partial_capacity;
    if (padded > 0) {
      GMM_ASSIGN_OR_RETURN(exact_lse_, DeviceArray<float>::Allocate(launch));
    }
  }
  GMM_ASSIGN_OR_RETURN(sums_, DeviceArray<double>::Allocate(num_sums));
  GMM_CUDA_RETURN_IF_ERROR(cudaMemset(sums_.get(), 0, sums_.bytes()));
  frames_ = 0;
  // Enough blocks for every multiprocessor a few times over, whatever the number of Gaussians.
  exact_splits_ = std::max(1, 4 * sms_ / std::max(1, exact_padded_ / 64));
  // The statistics kernel runs a block a multiprocessor: four whole waves.
  tensor_splits_ =
      std::max(1, 4 * sms_ / std::max<int32_t>(1, int32_t(slots / kEmTensorBlockGauss)));
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
  const size_t slots = slot_gauss_.size(), padded = size_t(exact_padded_), dim = size_t(dim_);
  double* exact_sums = sums_.get() + slots * size_t(EmTensorColumns(dim_));
  double* total = exact_sums + padded * (2 * dim + 1);
  const EmModelView exact{mean_.get(), inv_var_.get(), log_norm_.get(), exact_padded_, dim_};
  const EmStatsView exact_stats{exact_sums, exact_sums + padded, exact_sums + padded * (1 + dim),
                                total};
  const EmTensorModelView tensor{params_.get(), log_sum_records_.get(), consts_.get(),
                                 shift_.get(),  column_scale_.get(),    int32_t(slots),
                                 dim_};
  const int32_t slices =
      std::min(EmTensorLogSumSlices(tensor, num_frames, sms_),
               int32_t(std::max<size_t>(1, partial_capacity_ / size_t(std::max(1, num_frames)))));
  // The frames' log-sums over both shares of the Gaussians, then each share's statistics.
  if (slots == 0) {
    GMM_RETURN_IF_ERROR(
        EmFrameLogLikes(exact, device_frames, num_frames, lse_.get(), total, compute_));
  } else {
    GMM_RETURN_IF_ERROR(
        EmTensorLogSums(tensor, device_frames, num_frames, slices, partial_.get(), compute_));
    if (padded > 0) {
      GMM_RETURN_IF_ERROR(
          EmFrameLogLikes(exact, device_frames, num_frames, exact_lse_.get(), nullptr, compute_));
    }
    GMM_RETURN_IF_ERROR(EmCombineLogSums(partial_.get(), slices,
                                         padded > 0 ? exact_lse_.get() : nullptr, num_frames,
                                         lse_.get(), lse_bits_.get(), total, compute_));
    GMM_RETURN_IF_ERROR(EmTensorStatistics(tensor, device_frames, lse_bits_.get(), num_frames,
                                           tensor_splits_, sums_.get(), compute_));
  }
  if (padded > 0) {
    GMM_RETURN_IF_ERROR(EmStatistics(exact, device_frames, lse_.get(), num_frames, exact_splits_,
                                     exact_stats, compute_));
  }
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
  for (int64_t first = 0; first < resident_frames_; first += resident_launch_frames_) {
    const int32_t count =
        int32_t(std::min<int64_t>(resident_launch_frames_, resident_frames_ - first));
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
  const size_t slots = slot_gauss_.size(), padded = size_t(exact_padded_), dim = size_t(dim_);
  const size_t begin = stats->gauss_begin[pdf_];
  const bool means = (stats->flags & kGmmMeans) != 0,
             variances = (stats->flags & kGmmVariances) != 0;
  // Sums of y = x - c about a shift c back to Kaldi's: sum x = sum y + occ c,
  // sum x^2 = sum y^2 + 2 c sum y + occ c^2.
  const auto add = [&](size_t g, double occ, const double* s1, const double* s2, const auto& c) {
    stats->occupancy[begin + g] += occ;
    for (size_t d = 0; d < dim; ++d) {
      if (means) stats->first[(begin + g) * dim + d] += s1[d] + occ * c(d);
      if (variances)
        stats->second[(begin + g) * dim + d] += s2[d] + c(d) * (2.0 * s1[d] + occ * c(d));
    }
  };
  const size_t columns = size_t(EmTensorColumns(dim_));
  for (size_t slot = 0; slot < slots; ++slot) {
    if (slot_gauss_[slot] < 0) continue;
    const double* row = sums.data() + slot * columns;
    const float* shift = slot_shift_.data() + (slot / kEmTensorBlockGauss) * dim;
    add(size_t(slot_gauss_[slot]), row[0], row + 1, row + 1 + dim,
        [&](size_t d) { return double(shift[d]); });
  }
  const double* occ = sums.data() + slots * columns;
  const double* s1 = occ + padded;
  const double* s2 = s1 + padded * dim;
  for (size_t k = 0; k < exact_gauss_.size(); ++k) {
    add(size_t(exact_gauss_[k]), occ[k], s1 + k * dim, s2 + k * dim,
        [&](size_t d) { return exact_means_[k * dim + d]; });
  }
  stats->total_log_like += s2[padded * dim];
  stats->total_frames += double(frames_);
  frames_ = 0;
  return absl::OkStatus();
}

}  // namespace gmmscore
