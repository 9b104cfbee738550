#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "../../cpp/src/common/atomic_folder.hpp"
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
      // Messages quote file names and values, which may hold any bytes: an undecodable message would raise a
      // UnicodeDecodeError in place of the error.
      PyErr_SetObject(error.ptr(), text_to_python(e.what()).ptr());
    }
  });
  py::class_<relmem::AtomicFolder>(m, "AtomicFolder",
                                   "Writes a folder as a whole: write into .path, then commit() renames it into place.")
      .def(py::init([](const py::object& folder) { return std::make_unique<relmem::AtomicFolder>(path_argument(folder)); }),
           py::arg("folder"))
      .def_property_readonly("path", [](const relmem::AtomicFolder& f) { return path_to_python(f.path()); })
      .def("commit", &relmem::AtomicFolder::commit, py::call_guard<py::gil_scoped_release>())
      .def("discard", &relmem::AtomicFolder::discard);
  m.def("content_checksum", [](const py::bytes& data) { return relmem::content_checksum(data); }, py::arg("data"));
}

std::string sql_argument(const py::object& sql) {
  if (py::isinstance<py::bytes>(sql)) return sql.cast<std::string>();
  if (!py::isinstance<py::str>(sql)) throw py::type_error("SQL must be str or bytes");
  // Command lines reach Python with undecodable bytes as lone surrogates (surrogateescape): give SQLite's
  // checks those bytes back, so that a refusal can name them.
  PyObject* bytes = PyUnicode_AsEncodedString(sql.ptr(), "utf-8", "surrogateescape");
  if (!bytes) {
    PyErr_Clear();
    bytes = PyUnicode_AsEncodedString(sql.ptr(), "utf-8", "replace");
    if (!bytes) throw py::error_already_set();
  }
  return py::reinterpret_steal<py::bytes>(bytes).cast<std::string>();
}

std::string path_argument(const py::object& path) {
  // os.fsencode: str (undecodable bytes as surrogates), bytes or os.PathLike, as the file system's bytes.
  return py::module_::import("os").attr("fsencode")(path).cast<std::string>();
}

nlohmann::json python_to_json(py::handle object) {
  const std::string text = py::module_::import("json").attr("dumps")(object).cast<std::string>();
  return nlohmann::json::parse(text);
}

py::object json_to_python(const nlohmann::json& value) {
  return py::module_::import("json").attr("loads")(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

py::str text_to_python(const std::string& text) {
  PyObject* decoded = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (!decoded) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(decoded);
}

py::array_t<float> floats_to_numpy(const std::vector<float>& values) {
  py::array_t<float> out({static_cast<py::ssize_t>(values.size())}, {static_cast<py::ssize_t>(sizeof(float))});
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

py::str path_to_python(const std::string& path) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeFSDefaultAndSize(path.data(), static_cast<Py_ssize_t>(path.size())));
}

}  // namespace relmem_python
