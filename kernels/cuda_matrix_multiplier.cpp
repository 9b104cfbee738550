// MatrixMultiplier on a CUDA device: cublasSgemm (plain fp32, no TF32) on row-major matrices, with
// device buffers kept between calls.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <limits>

#include "cuda_resources.hpp"
#include "relmem/device/cuda_device.hpp"
#include "relmem/linalg/matrix_multiplier.hpp"

namespace relmem::gpu {
namespace {

int checked_int(Eigen::Index value) {
  if (value > std::numeric_limits<int>::max()) throw Error("gemm: matrix dimension too large for cuBLAS");
  return static_cast<int>(value);
}

class CudaMatrixMultiplier : public MatrixMultiplier {
 public:
  explicit CudaMatrixMultiplier(int device) : device_(device), a_(device), b_(device), c_(device) {
    require_cuda_device(device);
    DeviceGuard guard(device_);
    stream_ = std::make_unique<Stream>();
    cublas_ = std::make_unique<CublasHandle>(stream_->get());
  }

  ~CudaMatrixMultiplier() override {
    cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_->get());
  }

  std::string device() const override { return "cuda:" + std::to_string(device_); }

  void gemm(Transpose transpose_a, Transpose transpose_b, float alpha, const RowMatrix& a, const RowMatrix& b,
            float beta, RowMatrix& c) override {
    prepare_gemm_output(transpose_a, transpose_b, a, b, beta, c);
    if (c.size() == 0) return;
    DeviceGuard guard(device_);
    const cudaStream_t stream = stream_->get();
    const size_t a_bytes = sizeof(float) * a.size();
    const size_t b_bytes = sizeof(float) * b.size();
    const size_t c_bytes = sizeof(float) * c.size();
    a_.reserve(std::max<size_t>(a_bytes, 4), "gemm operand A");
    b_.reserve(std::max<size_t>(b_bytes, 4), "gemm operand B");
    c_.reserve(c_bytes, "gemm result C");
    check_cuda(cudaMemcpyAsync(a_.get(), a.data(), a_bytes, cudaMemcpyHostToDevice, stream), "uploading A");
    check_cuda(cudaMemcpyAsync(b_.get(), b.data(), b_bytes, cudaMemcpyHostToDevice, stream), "uploading B");
    if (beta != 0.0f) {
      check_cuda(cudaMemcpyAsync(c_.get(), c.data(), c_bytes, cudaMemcpyHostToDevice, stream), "uploading C");
    }
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, and a row-major matrix read
    // column-major is its transpose: so B comes first, with the same transpose flags.
    const int m = checked_int(c.rows());
    const int n = checked_int(c.cols());
    const int k = checked_int(transpose_a == Transpose::Yes ? a.rows() : a.cols());
    const auto op = [](Transpose t) { return t == Transpose::Yes ? CUBLAS_OP_T : CUBLAS_OP_N; };
    check_cublas(cublasSgemm(cublas_->get(), op(transpose_b), op(transpose_a), n, m, k, &alpha, b_.get<float>(),
                             std::max(1, checked_int(b.cols())), a_.get<float>(), std::max(1, checked_int(a.cols())),
                             &beta, c_.get<float>(), n),
                 "multiplying matrices");
    check_cuda(cudaMemcpyAsync(c.data(), c_.get(), c_bytes, cudaMemcpyDeviceToHost, stream), "downloading C");
    stream_->synchronize("multiplying matrices");
  }

 private:
  const int device_;
  std::unique_ptr<Stream> stream_;
  std::unique_ptr<CublasHandle> cublas_;
  DeviceBuffer a_;
  DeviceBuffer b_;
  DeviceBuffer c_;
};

}  // namespace

std::unique_ptr<MatrixMultiplier> make_cuda_matrix_multiplier(int device) {
  return std::make_unique<CudaMatrixMultiplier>(device);
}

}  // namespace relmem::gpu
