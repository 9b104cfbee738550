#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "relmem/common.hpp"

namespace py = pybind11;

namespace relmem_python {

void bind_common(py::module_& m) {
  static py::exception<relmem::Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const relmem::Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });
}

}  // namespace relmem_python
