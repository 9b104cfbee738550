#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relmem/encoders/encoder.hpp"
#include "relmem/encoders/hashing_encoder.hpp"
#include "relmem/encoders/model_home.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {

py::array_t<float> to_numpy(RowMatrix&& matrix) {
  auto* owned = new RowMatrix(std::move(matrix));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<RowMatrix*>(p); });
  return py::array_t<float>({owned->rows(), owned->cols()},
                            {owned->cols() * static_cast<py::ssize_t>(sizeof(float)), static_cast<py::ssize_t>(sizeof(float))},
                            owned->data(), free_when_done);
}

void bind_encoders(py::module_& m) {
  py::class_<Encoder, std::shared_ptr<Encoder>>(m, "Encoder", "Sentence encoder: encode(list of str) -> (n, dim) float32")
      .def("encode", [](const Encoder& e, const std::vector<std::string>& texts) {
             RowMatrix out;
             {
               py::gil_scoped_release release;
               out = e.encode(texts);
             }
             return to_numpy(std::move(out));
           }, py::arg("texts"))
      .def_property_readonly("dim", &Encoder::dim)
      .def_property_readonly("name", &Encoder::name)
      .def("__repr__", [](const Encoder& e) { return "Encoder(" + e.name() + ")"; });

  py::class_<HashingEncoder, Encoder, std::shared_ptr<HashingEncoder>>(m, "HashingEncoder")
      .def(py::init<int>(), py::arg("dim") = HashingEncoder::kDefaultDim);

  m.def("load_encoder_spec", [](const std::string& spec) { return std::shared_ptr<Encoder>(load_encoder(spec)); },
        py::arg("spec"), "Loads an encoder by registry spec, e.g. 'hashing:512', 'use-lite', 'bert:/path'.");
  m.def("registered_encoders", &registered_encoders);
  m.def("relmem_home", &relmem_home, "$RELMEM_HOME, else ~/.cache/relmem ('' when neither it nor HOME is set).");
  m.def("use_lite_search_path", &use_lite_search_path,
        "Folders searched for USE-lite's weights, in order: $RELMEM_USE_LITE_DIR, $RELMEM_HOME/models/use-lite.");
  m.def("find_use_lite_dir", &find_use_lite_dir, "The first of use_lite_search_path() holding the weights, or ''.");
  m.def("find_installed_model_dir", &find_installed_model_dir, py::arg("name"),
        "$RELMEM_HOME/models/<name> when scripts/install_models.sh installed it there, else ''.");
}

}  // namespace relmem_python
