#pragma once
// What relmem.VectorIndex and relmem.GpuVectorIndex bind alike, so that the two index classes keep one Python
// interface: add, remove, save, ids, reconstruct, `in`, len, dim and metric.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>

#include "bindings.hpp"
#include "relmem/index/vector_index.hpp"

namespace relmem_python {

using FloatArray = pybind11::array_t<float, pybind11::array::c_style | pybind11::array::forcecast>;
using IdArray = pybind11::array_t<int64_t, pybind11::array::c_style | pybind11::array::forcecast>;

template <class Index>
void def_index_methods(pybind11::class_<Index>& index) {
  namespace py = pybind11;
  index
      .def("add", [](Index& index, FloatArray vectors, std::optional<IdArray> ids) {
             const int64_t n = check_rows(vectors, index.dim(), "vectors");
             if (ids && (ids->ndim() != 1 || ids->shape(0) != n)) throw relmem::Error("ids must have shape (n,)");
             const int64_t* id_data = ids ? ids->data() : nullptr;
             py::gil_scoped_release release;
             index.add(vectors.data(), n, id_data);
           }, py::arg("vectors"), py::arg("ids") = py::none())
      .def("remove", [](Index& index, std::vector<int64_t> ids) { return index.remove(ids); }, py::arg("ids"))
      .def("save", [](const Index& index, const std::string& path) {
             py::gil_scoped_release release;
             index.save(path);
           }, py::arg("path"))
      .def("ids", [](const Index& index) { return to_numpy(index.ids()); })
      .def("reconstruct", [](const Index& index, int64_t id) { return to_numpy(index.reconstruct(id)); },
           py::arg("id"))
      .def("__contains__", &Index::contains)
      .def("__len__", &Index::size)
      .def_property_readonly("dim", &Index::dim)
      .def_property_readonly("metric", [](const Index& index) { return relmem::metric_name(index.metric()); });
}

}  // namespace relmem_python
