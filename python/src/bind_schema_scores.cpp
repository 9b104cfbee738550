// SchemaScores and SelectionMemory.schema_scores: the question's cosine with each table and column of databases.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relmem/memories/selection/selection_memory.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {

void bind_schema_scores(py::module_& m) {
  py::class_<SchemaScores>(m, "SchemaScores")
      .def_readonly("database", &SchemaScores::database)
      .def_readonly("tables", &SchemaScores::tables)
      .def_readonly("table_scores", &SchemaScores::table_scores)
      .def_readonly("column_scores", &SchemaScores::column_scores, "one per column of every table, in order")
      .def("__repr__", [](const SchemaScores& s) {
        return "SchemaScores(" + s.database + ", " + std::to_string(s.tables.size()) + " tables, " +
               std::to_string(s.column_scores.size()) + " columns)";
      });
  auto selection = py::reinterpret_borrow<py::class_<SelectionMemory>>(m.attr("SelectionMemory"));
  selection.def("schema_scores", [](const SelectionMemory& s, const std::string& question,
                                    const std::vector<std::string>& databases) {
    py::gil_scoped_release release;
    return s.schema_scores(question, databases);
  }, py::arg("question"), py::arg("databases"),
     "The question's sentence-encoder cosine with every table and column of each database (SchemaScores).");
}

}  // namespace relmem_python
