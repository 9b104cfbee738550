#pragma once
// RAII owners of CUDA resources (device and pinned memory, streams, events, cuBLAS handles) and the
// status checks that turn CUDA failures into relmem::Error. Host C++ only.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "relmem/common.hpp"

namespace relmem::gpu {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(std::string("CUDA error while ") + what + ": " + cudaGetErrorName(status) + " (" +
                cudaGetErrorString(status) + ")");
  }
}

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string("cuBLAS error while ") + what + ": " + cublasGetStatusName(status) + " (" +
                cublasGetStatusString(status) + ")");
  }
}

// Makes `device` current for the scope, restoring the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    check_cuda(cudaGetDevice(&previous_), "querying the current device");
    if (previous_ != device) check_cuda(cudaSetDevice(device), "selecting the device");
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// Device memory that only grows; contents are not preserved by reserve().
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int device) : device_(device) {}
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void reserve(size_t bytes, const char* what) {
    if (bytes <= bytes_) return;
    release();
    DeviceGuard guard(device_);
    const cudaError_t status = cudaMalloc(&data_, bytes);
    if (status != cudaSuccess) {
      cudaGetLastError();  // out-of-memory is not sticky; clear it
      data_ = nullptr;
      throw Error(std::string("cannot allocate ") + std::to_string(bytes >> 20) + " MiB of GPU memory for " + what +
                  ": " + cudaGetErrorString(status));
    }
    bytes_ = bytes;
  }
  void swap(DeviceBuffer& other) {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    std::swap(device_, other.device_);
  }
  template <typename T = void>
  T* get() const {
    return static_cast<T*>(data_);
  }
  size_t bytes() const { return bytes_; }

 private:
  void release() {
    if (!data_) return;
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device_);
    cudaFree(data_);
    cudaSetDevice(previous);
    data_ = nullptr;
    bytes_ = 0;
  }
  int device_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Page-locked host memory (fast, asynchronous transfers) that only grows.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() {
    if (data_) cudaFreeHost(data_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void reserve(size_t bytes) {
    if (bytes <= bytes_) return;
    if (data_) cudaFreeHost(data_);
    data_ = nullptr;
    bytes_ = 0;
    check_cuda(cudaMallocHost(&data_, bytes), "allocating pinned host memory");
    bytes_ = bytes;
  }
  template <typename T = void>
  T* get() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

class Stream {
 public:
  Stream() { check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a stream"); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize(const char* what) const { check_cuda(cudaStreamSynchronize(stream_), what); }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() { check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "creating an event"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t stream) {
    check_cublas(cublasCreate(&handle_), "creating a cuBLAS handle");
    check_cublas(cublasSetStream(handle_, stream), "binding cuBLAS to a stream");
  }
  ~CublasHandle() { cublasDestroy(handle_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace relmem::gpu
