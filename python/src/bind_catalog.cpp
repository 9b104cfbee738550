#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relmem/catalog/catalog.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {

py::object value_to_python(const Value& value) {
  if (std::holds_alternative<std::monostate>(value)) return py::none();
  if (auto* i = std::get_if<int64_t>(&value)) return py::int_(*i);
  if (auto* d = std::get_if<double>(&value)) return py::float_(*d);
  if (auto* s = std::get_if<std::string>(&value)) return text_to_python(*s);
  const auto& bytes = std::get<Blob>(value).bytes;
  return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

namespace {

py::list rows_to_python(const std::vector<std::vector<Value>>& rows) {
  py::list out;
  for (const auto& row : rows) {
    py::tuple t(row.size());
    for (size_t i = 0; i < row.size(); ++i) t[i] = value_to_python(row[i]);
    out.append(t);
  }
  return out;
}

}  // namespace

void bind_catalog(py::module_& m) {
  static py::exception<SqlError> sql_error(m, "SqlError", m.attr("Error").ptr());

  py::class_<Column>(m, "Column")
      .def_readonly("name", &Column::name)
      .def_readonly("type", &Column::type)
      .def_readonly("primary_key", &Column::primary_key)
      .def_readonly("not_null", &Column::not_null)
      .def("__repr__", [](const Column& c) { return "Column(" + c.name + " " + c.type + ")"; });
  py::class_<ForeignKey>(m, "ForeignKey")
      .def_readonly("from_column", &ForeignKey::from_column)
      .def_readonly("to_table", &ForeignKey::to_table)
      .def_readonly("to_column", &ForeignKey::to_column)
      .def("__repr__", [](const ForeignKey& f) {
        return "ForeignKey(" + f.from_column + " -> " + f.to_table + "." + f.to_column + ")";
      });
  py::class_<Table>(m, "Table")
      .def_readonly("name", &Table::name)
      .def_readonly("columns", &Table::columns)
      .def_readonly("foreign_keys", &Table::foreign_keys)
      .def_readonly("row_count", &Table::row_count)
      .def("column", &Table::column, py::return_value_policy::reference_internal)
      .def("__repr__", [](const Table& t) { return "Table(" + t.name + ", " + std::to_string(t.columns.size()) + " columns)"; });
  py::class_<Schema>(m, "Schema")
      .def_readonly("name", &Schema::name)
      .def_property_readonly("path", [](const Schema& s) { return path_to_python(s.path); })
      .def_readonly("tables", &Schema::tables)
      .def("table", &Schema::table, py::return_value_policy::reference_internal)
      .def("__repr__", [](const Schema& s) { return "Schema(" + s.name + ", " + std::to_string(s.tables.size()) + " tables)"; });

  py::class_<QueryResult>(m, "QueryResult")
      .def_readonly("columns", &QueryResult::columns)
      .def_property_readonly("rows", [](const QueryResult& r) { return rows_to_python(r.rows); })
      .def_readonly("truncated", &QueryResult::truncated)
      .def_property_readonly("ok", &QueryResult::ok)
      .def_property_readonly("error", [](const QueryResult& r) -> py::object {
        return r.error ? py::str(r.error->message) : py::object(py::none());
      })
      .def_property_readonly("error_kind", [](const QueryResult& r) -> py::object {
        return r.error ? py::str(sql_error_kind_name(r.error->kind)) : py::object(py::none());
      })
      .def("raise_for_error", [](const QueryResult& r) {
        if (r.error) {
          PyErr_SetString(sql_error.ptr(), (sql_error_kind_name(r.error->kind) + ": " + r.error->message).c_str());
          throw py::error_already_set();
        }
      }, "Raises relmem.SqlError when the statement was refused or failed.")
      .def("__len__", [](const QueryResult& r) { return r.rows.size(); })
      .def("__repr__", [](const QueryResult& r) {
        return r.error ? "QueryResult(error=" + r.error->message + ")"
                       : "QueryResult(" + std::to_string(r.rows.size()) + " rows)";
      });

  py::class_<Catalog>(m, "Catalog", "A collection of SQLite databases, opened read-only.")
      .def(py::init([](const py::object& path) {
             if (py::isinstance<py::list>(path) || py::isinstance<py::tuple>(path)) {
               std::vector<std::string> paths;
               for (const auto& item : path) paths.push_back(path_argument(py::reinterpret_borrow<py::object>(item)));
               py::gil_scoped_release release;
               return Catalog::open_files(paths);
             }
             const std::string folder = path_argument(path);
             py::gil_scoped_release release;
             return Catalog::open(folder);
           }),
           py::arg("path"),
           "A folder searched recursively for *.sqlite/*.sqlite3/*.db, one database file, or a list of files.")
      .def_property_readonly("databases", &Catalog::databases)
      .def_property_readonly("skipped", [](const Catalog& c) {
        py::list out;
        for (const auto& s : c.skipped()) out.append(py::make_tuple(path_to_python(s.path), s.reason));
        return out;
      }, "(path, reason) for each file a folder scan could not read.")
      .def("add", [](Catalog& c, const py::object& path) { c.add(path_argument(path)); }, py::arg("path"))
      .def("remove", &Catalog::remove, py::arg("db"))
      .def("schema", &Catalog::schema, py::arg("db"), py::return_value_policy::reference_internal)
      .def("path", [](const Catalog& c, const std::string& db) { return path_to_python(c.path(db)); }, py::arg("db"))
      .def("ddl", &Catalog::ddl, py::arg("db"))
      .def("card", [](const Catalog& c, const std::string& db, int samples, const std::string& description) {
             CardOptions options;
             options.samples_per_column = samples;
             options.description = description;
             return c.card(db, options);
           }, py::arg("db"), py::arg("samples") = 3, py::arg("description") = "")
      .def("table_card", [](const Catalog& c, const std::string& db, const std::string& table, int samples) {
             CardOptions options;
             options.samples_per_column = samples;
             return c.table_card(db, table, options);
           }, py::arg("db"), py::arg("table"), py::arg("samples") = 3)
      .def("distinct_values", [](const Catalog& c, const std::string& db, const std::string& table,
                                 const std::string& column, int64_t cap) {
             std::vector<Value> values;
             {
               py::gil_scoped_release release;
               values = c.distinct_values(db, table, column, cap);
             }
             py::list out;
             for (const auto& v : values) out.append(value_to_python(v));
             return out;
           }, py::arg("db"), py::arg("table"), py::arg("column"), py::arg("cap") = 1000)
      .def("execute", [](const Catalog& c, const std::string& db, const py::object& sql, double timeout,
                         int64_t max_rows, int64_t max_bytes) {
             const std::string& path = c.path(db);
             const std::string text = sql_argument(sql);
             py::gil_scoped_release release;
             return execute_readonly(path, text, ExecOptions{timeout, max_rows, max_bytes});
           }, py::arg("db"), py::arg("sql"), py::arg("timeout") = 10.0, py::arg("max_rows") = 10000,
           py::arg("max_bytes") = ExecOptions().max_bytes,
           "Runs one SELECT/WITH statement (str or bytes) read-only; SQL problems come back in QueryResult.error.")
      .def("__len__", [](const Catalog& c) { return c.databases().size(); })
      .def("__contains__", &Catalog::contains)
      .def("__repr__", [](const Catalog& c) { return "Catalog(" + std::to_string(c.databases().size()) + " databases)"; });

  m.def("execute_readonly", [](const py::object& path, const py::object& sql, double timeout, int64_t max_rows,
                               int64_t max_bytes) {
          const std::string file = path_argument(path);
          const std::string text = sql_argument(sql);
          py::gil_scoped_release release;
          return execute_readonly(file, text, ExecOptions{timeout, max_rows, max_bytes});
        }, py::arg("path"), py::arg("sql"), py::arg("timeout") = 10.0, py::arg("max_rows") = 10000,
        py::arg("max_bytes") = ExecOptions().max_bytes);
}

}  // namespace relmem_python
