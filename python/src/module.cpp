#include "bindings.hpp"

PYBIND11_MODULE(_relmem, m) {
  m.doc() = "relmem C++ core";
  relmem_python::bind_common(m);
  relmem_python::bind_catalog(m);
  relmem_python::bind_encoders(m);
  relmem_python::bind_index(m);
}
