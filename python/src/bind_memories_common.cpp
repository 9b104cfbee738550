// What the memories share in Python: the progress callback of build() and refresh(), and the refresh report.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relmem/memories/memory_refresh.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {

BuildProgress progress_from(const py::object& progress, const std::string& description) {
  const py::object callback = py::module_::import("relmem.progress").attr("callback")(progress, description);
  if (callback.is_none()) return {};
  auto shared = std::make_shared<py::object>(callback);
  return [shared](const std::string& db, size_t done, size_t total) {
    py::gil_scoped_acquire gil;
    (*shared)(db, done, total);
  };
}

void bind_memories_common(py::module_& m) {
  py::class_<RefreshReport>(m, "RefreshReport", "What refresh() did: databases added, updated (re-read because "
                                                "their file changed), removed, and how many were unchanged.")
      .def(py::init([](std::vector<std::string> added, std::vector<std::string> updated,
                       std::vector<std::string> removed, int unchanged) {
             return RefreshReport{std::move(added), std::move(updated), std::move(removed), unchanged};
           }),
           py::arg("added") = std::vector<std::string>{}, py::arg("updated") = std::vector<std::string>{},
           py::arg("removed") = std::vector<std::string>{}, py::arg("unchanged") = 0)
      .def_readonly("added", &RefreshReport::added)
      .def_readonly("updated", &RefreshReport::updated)
      .def_readonly("removed", &RefreshReport::removed)
      .def_readonly("unchanged", &RefreshReport::unchanged)
      .def("__eq__", [](const RefreshReport& a, const RefreshReport& b) {
        return a.added == b.added && a.updated == b.updated && a.removed == b.removed && a.unchanged == b.unchanged;
      })
      .def("__repr__", [](const RefreshReport& r) {
        auto names = [](const std::vector<std::string>& list) {
          return py::repr(py::cast(list)).cast<std::string>();
        };
        return "RefreshReport(added=" + names(r.added) + ", updated=" + names(r.updated) + ", removed=" +
               names(r.removed) + ", unchanged=" + std::to_string(r.unchanged) + ")";
      });

  py::class_<DatabaseFile>(m, "DatabaseFile", "The file a memory read a database from: path, size, mtime_ns.")
      .def(py::init([](std::string path, int64_t size, int64_t mtime_ns) {
             return DatabaseFile{std::move(path), FileStamp{size, mtime_ns}};
           }),
           py::arg("path"), py::arg("size"), py::arg("mtime_ns"))
      .def_readonly("path", &DatabaseFile::path)
      .def_property_readonly("size", [](const DatabaseFile& f) { return f.stamp.size; })
      .def_property_readonly("mtime_ns", [](const DatabaseFile& f) { return f.stamp.mtime_ns; });

  m.def("database_file", &database_file, py::arg("catalog"), py::arg("db"),
        "The path and stamp (size, modification time) of a database's file now.");
  m.def(
      "plan_refresh",
      [](const Catalog& catalog, const std::map<std::string, DatabaseFile>& held) {
        RefreshReport report;
        std::vector<std::string> rebuild = plan_refresh(catalog, held, report);
        return py::make_tuple(report, rebuild);
      },
      py::arg("catalog"), py::arg("held"),
      "(RefreshReport, databases to rebuild) for a memory holding `held` ({db: DatabaseFile}): what every "
      "memory's refresh() does.");
}

}  // namespace relmem_python

