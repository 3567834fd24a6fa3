#include "bench/cuda/cublas_em_peer.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/cuda/cublas_status.h"
#include "bench/cuda/em_peer_kernels.h"
#include "kernels/cuda/common/cuda_status.h"

namespace gmmscore {

absl::StatusOr<std::unique_ptr<CublasEmPeer>> CublasEmPeer::Create(const GmmModel& model,
                                                                   int32_t chunk_frames) {
  std::unique_ptr<CublasEmPeer> p(new CublasEmPeer());
  p->dim_ = model.dim();
  p->num_gauss_ = model.num_gauss_in(0);
  p->chunk_frames_ = chunk_frames;
  const size_t dim = size_t(p->dim_), gauss = size_t(p->num_gauss_);
  std::vector<float> u(dim * gauss), v(dim * gauss), k(gauss);
  for (size_t g = 0; g < gauss; ++g) {
    k[g] = static_cast<float>(model.gconst(int64_t(g)));
    for (size_t d = 0; d < dim; ++d) {
      u[g * dim + d] = model.mean_invvar(int64_t(g))[d];
      v[g * dim + d] = model.neg_half_invvar(int64_t(g))[d];
    }
  }
  GMM_ASSIGN_OR_RETURN(p->u_, UploadToDevice(u));
  GMM_ASSIGN_OR_RETURN(p->v_, UploadToDevice(v));
  GMM_ASSIGN_OR_RETURN(p->k_, UploadToDevice(k));
  GMM_ASSIGN_OR_RETURN(p->squares_, DeviceArray<float>::Allocate(dim * size_t(chunk_frames)));
  GMM_ASSIGN_OR_RETURN(p->matrix_, DeviceArray<float>::Allocate(gauss * size_t(chunk_frames)));
  GMM_ASSIGN_OR_RETURN(p->ones_, UploadToDevice(std::vector<float>(size_t(chunk_frames), 1.0f)));
  GMM_ASSIGN_OR_RETURN(p->occ_, UploadToDevice(std::vector<float>(gauss, 0.0f)));
  GMM_ASSIGN_OR_RETURN(p->first_, UploadToDevice(std::vector<float>(gauss * dim, 0.0f)));
  GMM_ASSIGN_OR_RETURN(p->second_, UploadToDevice(std::vector<float>(gauss * dim, 0.0f)));
  GMM_ASSIGN_OR_RETURN(p->total_log_like_, UploadToDevice(std::vector<double>(1, 0.0)));
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&p->stream_, cudaStreamNonBlocking));
  GMM_CUBLAS_RETURN_IF_ERROR(cublasCreate(&p->handle_));
  GMM_CUBLAS_RETURN_IF_ERROR(cublasSetStream(p->handle_, p->stream_));
  GMM_CUBLAS_RETURN_IF_ERROR(cublasSetMathMode(p->handle_, CUBLAS_DEFAULT_MATH));  // no TF32
  return p;
}

CublasEmPeer::~CublasEmPeer() {
  if (handle_ != nullptr) (void)cublasDestroy(handle_);
  if (stream_ != nullptr) {
    (void)cudaStreamSynchronize(stream_);
    (void)cudaStreamDestroy(stream_);
  }
}

absl::Status CublasEmPeer::Accumulate(const float* device_frames, int64_t num_frames) {
  const float one = 1.0f, zero = 0.0f;
  const int dim = dim_, gauss = num_gauss_;
  for (int64_t first = 0; first < num_frames; first += chunk_frames_) {
    const int n = int(std::min<int64_t>(chunk_frames_, num_frames - first));
    const float* x = device_frames + size_t(first) * size_t(dim);  // column-major dim x n
    GMM_RETURN_IF_ERROR(SquareValues(x, int64_t(n) * dim, squares_.get(), stream_));
    // scores (gauss x n) = u^T x + v^T x^2
    GMM_CUBLAS_RETURN_IF_ERROR(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, gauss, n, dim, &one,
                                           u_.get(), dim, x, dim, &zero, matrix_.get(), gauss));
    GMM_CUBLAS_RETURN_IF_ERROR(cublasSgemm(handle_, CUBLAS_OP_T, CUBLAS_OP_N, gauss, n, dim, &one,
                                           v_.get(), dim, squares_.get(), dim, &one, matrix_.get(),
                                           gauss));
    GMM_RETURN_IF_ERROR(
        PosteriorsInPlace(matrix_.get(), k_.get(), gauss, n, total_log_like_.get(), stream_));
    // first (dim x gauss) += x gamma^T, second += x^2 gamma^T, occ += gamma 1
    GMM_CUBLAS_RETURN_IF_ERROR(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_T, dim, gauss, n, &one,
                                           x, dim, matrix_.get(), gauss, &one, first_.get(), dim));
    GMM_CUBLAS_RETURN_IF_ERROR(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_T, dim, gauss, n, &one,
                                           squares_.get(), dim, matrix_.get(), gauss, &one,
                                           second_.get(), dim));
    GMM_CUBLAS_RETURN_IF_ERROR(cublasSgemv(handle_, CUBLAS_OP_N, gauss, n, &one, matrix_.get(),
                                           gauss, ones_.get(), 1, &one, occ_.get(), 1));
    frames_ += n;
  }
  return absl::OkStatus();
}

absl::Status CublasEmPeer::AddTo(GmmStats* stats) {
  GMM_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  const size_t dim = size_t(dim_), gauss = size_t(num_gauss_);
  std::vector<float> occ(gauss), first(gauss * dim), second(gauss * dim);
  double total = 0.0;
  GMM_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(occ.data(), occ_.get(), occ_.bytes(), cudaMemcpyDeviceToHost));
  GMM_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(first.data(), first_.get(), first_.bytes(), cudaMemcpyDeviceToHost));
  GMM_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(second.data(), second_.get(), second_.bytes(), cudaMemcpyDeviceToHost));
  GMM_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(&total, total_log_like_.get(), sizeof(double), cudaMemcpyDeviceToHost));
  for (DeviceArray<float>* a : {&occ_, &first_, &second_}) {
    GMM_CUDA_RETURN_IF_ERROR(cudaMemset(a->get(), 0, a->bytes()));
  }
  GMM_CUDA_RETURN_IF_ERROR(cudaMemset(total_log_like_.get(), 0, sizeof(double)));
  for (size_t g = 0; g < gauss; ++g) {
    stats->occupancy[g] += occ[g];
    for (size_t d = 0; d < dim; ++d) {
      stats->first[g * dim + d] += first[g * dim + d];
      stats->second[g * dim + d] += second[g * dim + d];
    }
  }
  stats->total_log_like += total;
  stats->total_frames += double(frames_);
  frames_ = 0;
  return absl::OkStatus();
}

}  // namespace gmmscore
