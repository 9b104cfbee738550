// Python side of the CUDA index: relmem.GpuVectorIndex (same methods as VectorIndex, plus dtype,
// device and the search algorithm) and device discovery. Present in every build; without CUDA the
// constructor raises relmem.Error saying so.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "bind_index_methods.hpp"
#include "relmem/device/cuda_device.hpp"
#include "relmem/index/gpu/gpu_vector_index.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {
namespace {

py::dict device_info_to_python(const gpu::CudaDeviceInfo& info) {
  py::dict d;
  d["device"] = info.device;
  d["name"] = info.name;
  d["compute_capability"] = std::to_string(info.compute_capability_major) + "." +
                            std::to_string(info.compute_capability_minor);
  d["multiprocessors"] = info.multiprocessors;
  d["memory_bytes"] = info.memory_bytes;
  d["peak_memory_bandwidth_gbs"] = info.peak_memory_bandwidth_gbs;
  d["sm_clock_mhz"] = info.sm_clock_mhz;
  return d;
}

}  // namespace

void bind_gpu(py::module_& m) {
  m.def("built_with_cuda", &gpu::built_with_cuda, "Whether relmem was compiled with its CUDA kernels.");
  m.def("cuda_device_count", [] { return gpu::cuda_device_count(); },
        "Number of usable CUDA devices (0 without CUDA, a driver or a GPU).");
  m.def("cuda_unavailable_reason", [] {
        std::string why;
        return gpu::cuda_device_count(&why) > 0 ? std::string() : why;
      }, "Why no CUDA device is usable, or '' when one is.");
  m.attr("GPU_FUSED_MAX_QUERIES") = gpu::kFusedMaxQueries;
  m.attr("GPU_STREAM_FUSED_MAX_QUERIES") = gpu::kStreamFusedMaxQueries;
  m.attr("GPU_MAX_K") = gpu::kMaxSelectK;
  m.def("cuda_device_info", [](int device) { return device_info_to_python(gpu::cuda_device_info(device)); },
        py::arg("device") = 0);

  py::class_<GpuVectorIndex> gpu_index(m, "GpuVectorIndex",
                                   "Exact top-k on a CUDA device over fp32/fp16/bf16 vectors with int64 ids.");
  def_index_methods(gpu_index);
  gpu_index
      .def(py::init([](int dim, const std::string& metric, const std::string& dtype, int device) {
             return std::make_unique<GpuVectorIndex>(dim, parse_metric(metric), gpu::parse_precision(dtype), device);
           }),
           py::arg("dim"), py::arg("metric") = "cosine", py::arg("dtype") = "fp16", py::arg("device") = 0)
      .def("search", [](const GpuVectorIndex& index, FloatArray queries, int k,
                        std::optional<std::pair<int64_t, int64_t>> id_range,
                        std::optional<std::vector<int64_t>> subset) {
             if (id_range && subset) throw Error("give id_range or subset, not both");
             const int64_t n = check_rows(queries, index.dim(), "queries");
             SearchResult result;
             {
               py::gil_scoped_release release;
               if (id_range) {
                 result = index.search_range(queries.data(), n, k, id_range->first, id_range->second);
               } else if (subset) {
                 result = index.search_subset(queries.data(), n, k, *subset);
               } else {
                 result = index.search(queries.data(), n, k);
               }
             }
             return to_python(std::move(result));
           }, py::arg("queries"), py::arg("k"), py::arg("id_range") = py::none(), py::arg("subset") = py::none(),
           "Returns (scores, ids), each of shape (n_queries, k); missing results are -inf / -1.")
      .def_static("load", [](const std::string& path, const std::string& dtype, int device) {
             py::gil_scoped_release release;
             return GpuVectorIndex::load(path, gpu::parse_precision(dtype), device);
           }, py::arg("path"), py::arg("dtype") = "fp16", py::arg("device") = 0)
      .def_property_readonly("dtype",
                             [](const GpuVectorIndex& index) { return gpu::precision_name(index.precision()); })
      .def_property("algorithm",
                    [](const GpuVectorIndex& index) { return gpu::search_algorithm_name(index.search_algorithm()); },
                    [](GpuVectorIndex& index, const std::string& name) {
                      index.set_search_algorithm(gpu::parse_search_algorithm(name));
                    },
                    "auto, fused, fused_simt, gemm_select or gemm_sort (benchmarks compare them).")
      .def("__repr__", [](const GpuVectorIndex& index) {
        return "GpuVectorIndex(dim=" + std::to_string(index.dim()) + ", metric=" + metric_name(index.metric()) +
               ", dtype=" + gpu::precision_name(index.precision()) + ", size=" + std::to_string(index.size()) + ")";
      });
}

}  // namespace relmem_python
