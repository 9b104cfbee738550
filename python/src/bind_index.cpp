#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "bind_index_methods.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {

int64_t check_rows(const FloatArray& a, int dim, const char* what) {
  if (a.ndim() == 1 && a.shape(0) == dim) return 1;
  if (a.ndim() != 2 || a.shape(1) != dim)
    throw Error(std::string(what) + " must have shape (n, " + std::to_string(dim) + ")");
  return a.shape(0);
}

py::tuple to_python(SearchResult&& r) {
  auto* ids = new IdMatrix(std::move(r.ids));
  py::capsule free_ids(ids, [](void* p) { delete static_cast<IdMatrix*>(p); });
  py::array_t<int64_t> id_array({ids->rows(), ids->cols()},
                                {ids->cols() * static_cast<py::ssize_t>(sizeof(int64_t)), static_cast<py::ssize_t>(sizeof(int64_t))},
                                ids->data(), free_ids);
  return py::make_tuple(to_numpy(std::move(r.scores)), id_array);
}

void bind_index(py::module_& m) {
  py::class_<VectorIndex> vector_index(m, "VectorIndex",
                                "Brute-force top-k over vectors with int64 ids (cosine or inner product), on the CPU in "
                                "fp32, fp16 or int8 or on a CUDA device in fp32, fp16 or bf16.");
  def_index_methods(vector_index);
  vector_index
      .def(py::init([](int dim, const std::string& metric, const std::string& device, const std::string& dtype,
                       int rerank) { return VectorIndex(dim, parse_metric(metric), device, dtype, rerank); }),
           py::arg("dim"), py::arg("metric") = "cosine", py::arg("device") = "cpu", py::arg("dtype") = "fp32",
           py::arg("rerank") = 0,
           "device: 'cpu', 'cuda' or 'cuda:N'; dtype: 'fp32', 'fp16' or 'int8' on cpu, 'fp32', 'fp16' or 'bf16' on "
           "cuda. rerank=R (cpu, fp16/int8): also keep the fp32 vectors and re-score the best max(k, R) candidates "
           "of every search with them. Raises relmem.Error when relmem was built without CUDA or no CUDA device is "
           "usable.")
      .def("search", [](const VectorIndex& index, FloatArray queries, int k, std::optional<std::pair<int64_t, int64_t>> id_range) {
             const int64_t n = check_rows(queries, index.dim(), "queries");
             SearchResult result;
             {
               py::gil_scoped_release release;
               result = id_range ? index.search_range(queries.data(), n, k, id_range->first, id_range->second)
                                 : index.search(queries.data(), n, k);
             }
             return to_python(std::move(result));
           }, py::arg("queries"), py::arg("k"), py::arg("id_range") = py::none(),
           "Returns (scores, ids), each of shape (n_queries, k); missing results are -inf / -1.")
      .def_static("load", [](const std::string& path, const std::string& device, const std::string& dtype, bool mmap) {
             py::gil_scoped_release release;
             return VectorIndex::load(path, device, dtype, mmap);
           }, py::arg("path"), py::arg("device") = "cpu", py::arg("dtype") = "", py::arg("mmap") = false,
           "Loads a file save() wrote (from any device) onto `device`, in the file's dtype or `dtype`. mmap=True "
           "(cpu, the file's dtype): the vectors stay in the file, mapped, and are read as searches touch them; "
           "the header and ids are checked at once, the vectors by a full load or VectorIndex.verify(path).")
      .def_static("verify", [](const std::string& path) {
             py::gil_scoped_release release;
             VectorIndex::verify(path);
           }, py::arg("path"), "Checks a saved file's whole checksum; raises relmem.Error when it is damaged.")
      .def_property_readonly("device", &VectorIndex::device)
      .def_property_readonly("dtype", &VectorIndex::dtype)
      .def_property_readonly("rerank", &VectorIndex::rerank)
      .def_property_readonly("mapped", &VectorIndex::mapped)
      .def("memory_bytes", &VectorIndex::memory_bytes,
           "Bytes held in this process's memory on the CPU (vectors, scales, the fp32 copy, ids); mapped vectors "
           "are not counted.")
      .def("__repr__", [](const VectorIndex& index) {
        std::string placement = index.device() == "cpu" ? "" : ", device=" + index.device();
        if (index.device() != "cpu" || index.dtype() != "fp32") placement += ", dtype=" + index.dtype();
        if (index.rerank() > 0) placement += ", rerank=" + std::to_string(index.rerank());
        return "VectorIndex(dim=" + std::to_string(index.dim()) + ", metric=" + metric_name(index.metric()) +
               placement + ", size=" + std::to_string(index.size()) + ")";
      });
}

}  // namespace relmem_python
