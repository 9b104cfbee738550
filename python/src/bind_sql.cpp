// relmem._relmem.sql: parsing, conditions, literal rewriting, qualifier repair and the static detector.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relmem/catalog/catalog.hpp"
#include "relmem/sql/inspector.hpp"
#include "relmem/sql/query.hpp"
#include "relmem/sql/repair.hpp"
#include "relmem/sql/syntax_error.hpp"

namespace py = pybind11;
using namespace relmem::sql;

namespace relmem_python {
namespace {

std::string literal_kind_name(LiteralKind kind) {
  switch (kind) {
    case LiteralKind::Number: return "number";
    case LiteralKind::String: return "string";
    case LiteralKind::Blob: return "blob";
    case LiteralKind::Null: return "null";
    case LiteralKind::Keyword: return "keyword";
  }
  return "unknown";
}

// `name(sql, schema)` and `name(sql, catalog, db)`, the second with the database's schema from the catalog.
template <typename Analyse>
void def_on_schema(py::module_& sql, const char* name, Analyse analyse, const char* doc = nullptr) {
  sql.def(
      name, [analyse](const std::string& text, const relmem::Schema& schema) { return analyse(text, schema); },
      py::arg("sql"), py::arg("schema"), doc);
  sql.def(
      name,
      [analyse](const std::string& text, const relmem::Catalog& catalog, const std::string& db) {
        return analyse(text, catalog.schema(db));
      },
      py::arg("sql"), py::arg("catalog"), py::arg("db"));
}

// A repair's result: the repaired SQL and its fixes; `noun` counts them in the repr ("2 join(s)").
template <typename Repair>
void def_repair_result(py::module_& sql, const char* name, const char* doc, const char* noun) {
  py::class_<Repair>(sql, name, doc)
      .def_readonly("sql", &Repair::sql)
      .def_readonly("repairs", &Repair::repairs)
      .def("__repr__", [name = std::string(name), noun = std::string(noun)](const Repair& r) {
        return name + "(" + py::repr(py::str(r.sql)).cast<std::string>() + ", " + std::to_string(r.repairs.size()) +
               " " + noun + ")";
      });
}

// A literal of the query, as Python sees it.
struct LiteralInfo {
  int index;
  std::string kind;
  std::string value;
  size_t start;
  size_t end;
};

std::vector<LiteralInfo> literal_infos(const Query& query) {
  std::vector<LiteralInfo> out;
  for (const Expr* literal : query.literals()) {
    out.push_back(LiteralInfo{literal->literal_index, literal_kind_name(literal->literal_kind), literal->value,
                              literal->start, literal->end});
  }
  return out;
}

// str -> string literal, int/bool/float -> number, None -> NULL.
LiteralValue to_literal_value(const py::handle& value) {
  if (value.is_none()) return LiteralValue::null();
  if (py::isinstance<py::str>(value)) return LiteralValue::string(value.cast<std::string>());
  if (py::isinstance<py::int_>(value)) {
    try {
      return LiteralValue::number(value.cast<int64_t>());
    } catch (const py::cast_error&) {
      return LiteralValue::number(py::str(value).cast<std::string>());  // beyond 64 bits: keep every digit
    }
  }
  if (py::isinstance<py::float_>(value)) return LiteralValue::number(value.cast<double>());
  throw py::type_error("a literal replacement must be str, int, float or None, not " +
                       py::str(py::type::of(value).attr("__name__")).cast<std::string>());
}

std::map<int, LiteralValue> to_replacements(const py::dict& replacements) {
  std::map<int, LiteralValue> out;
  for (const auto& [key, value] : replacements) {
    if (!py::isinstance<py::int_>(key)) throw py::type_error("replacement keys are literal indices (int)");
    out.emplace(key.cast<int>(), to_literal_value(value));
  }
  return out;
}

std::string span_repr(size_t start, size_t end) { return std::to_string(start) + ":" + std::to_string(end); }

}  // namespace

void bind_sql(py::module_& m) {
  auto sql = m.def_submodule("sql", "SQL analysis: parsing, conditions, literal rewriting, static checks.");

  static py::exception<SyntaxError> syntax_error(sql, "SqlSyntaxError", m.attr("Error").ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const SyntaxError& e) {
      py::object error = py::reinterpret_borrow<py::object>(syntax_error.ptr())(e.what());
      error.attr("offset") = e.offset();
      PyErr_SetObject(syntax_error.ptr(), error.ptr());
    }
  });

  py::class_<Condition>(sql, "Condition", "A column compared with a literal, resolved to its base table.")
      .def_readonly("table", &Condition::table)
      .def_readonly("column", &Condition::column)
      .def_readonly("op", &Condition::op)
      .def_readonly("literal", &Condition::literal)
      .def_property_readonly("literal_kind", [](const Condition& c) { return literal_kind_name(c.literal_kind); })
      .def_readonly("literal_index", &Condition::literal_index)
      .def_readonly("start", &Condition::start)
      .def_readonly("end", &Condition::end)
      .def_readonly("column_start", &Condition::column_start)
      .def_readonly("column_end", &Condition::column_end)
      .def_readonly("comparison_start", &Condition::comparison_start)
      .def_readonly("comparison_end", &Condition::comparison_end)
      .def("__repr__", [](const Condition& c) {
        return "Condition(" + c.table + "." + c.column + " " + c.op + " " +
               py::repr(py::str(c.literal)).cast<std::string>() + " @" + span_repr(c.start, c.end) + ")";
      });

  py::class_<LiteralInfo>(sql, "Literal", "A literal of the query; index is what rewrite_literals takes.")
      .def_readonly("index", &LiteralInfo::index)
      .def_readonly("kind", &LiteralInfo::kind)
      .def_readonly("value", &LiteralInfo::value)
      .def_readonly("start", &LiteralInfo::start)
      .def_readonly("end", &LiteralInfo::end)
      .def("__repr__", [](const LiteralInfo& l) {
        return "Literal(" + std::to_string(l.index) + ", " + l.kind + ", " +
               py::repr(py::str(l.value)).cast<std::string>() + ")";
      });

  py::class_<Diagnostic>(sql, "Diagnostic", "One finding of the static detector.")
      .def_property_readonly("kind", [](const Diagnostic& d) { return kind_name(d.kind); })
      .def_property_readonly("severity", [](const Diagnostic& d) { return severity_name(d.severity); })
      .def_readonly("start", &Diagnostic::start)
      .def_readonly("end", &Diagnostic::end)
      .def_readonly("message", &Diagnostic::message)
      .def("__repr__", [](const Diagnostic& d) {
        return "Diagnostic(" + severity_name(d.severity) + " " + kind_name(d.kind) + " @" +
               span_repr(d.start, d.end) + ": " + d.message + ")";
      });

  py::class_<QualifierFix>(sql, "QualifierFix", "A column qualifier replaced by the FROM item that has the column.")
      .def_readonly("column", &QualifierFix::column)
      .def_readonly("original", &QualifierFix::original)
      .def_readonly("replacement", &QualifierFix::replacement)
      .def_readonly("start", &QualifierFix::start)
      .def_readonly("end", &QualifierFix::end)
      .def("__repr__", [](const QualifierFix& f) {
        return "QualifierFix(" + f.original + "." + f.column + " -> " + f.replacement + "." + f.column + " @" +
               span_repr(f.start, f.end) + ")";
      });

  def_repair_result<QualifierRepair>(sql, "QualifierRepair", "The repaired SQL and its fixes, in source order.",
                                     "repair(s)");

  py::class_<JoinFix>(sql, "JoinFix", "A table joined for a column that no FROM item of its SELECT had.")
      .def_readonly("column", &JoinFix::column)
      .def_readonly("table", &JoinFix::table)
      .def_readonly("clause", &JoinFix::clause)
      .def_readonly("position", &JoinFix::position)
      .def("__repr__", [](const JoinFix& f) {
        return "JoinFix(" + f.column + ":" + f.clause + " @" + std::to_string(f.position) + ")";
      });

  def_repair_result<JoinRepair>(sql, "JoinRepair", "The repaired SQL and its joins, in the order they were made.",
                                "join(s)");

  py::class_<CountFix>(sql, "CountFix", "A count of one row per row turned into a count of the rows that reference it.")
      .def_readonly("table", &CountFix::table)
      .def_readonly("clause", &CountFix::clause)
      .def_readonly("group_by", &CountFix::group_by)
      .def("__repr__", [](const CountFix& f) { return "CountFix(" + f.table + ":" + f.clause + f.group_by + ")"; });

  def_repair_result<CountRepair>(sql, "CountRepair", "The repaired SQL and its fix, if any.", "fix(es)");

  py::class_<Query>(sql, "Query", "A parsed SELECT statement with its names resolved.")
      .def_property_readonly("sql", &Query::sql)
      .def_property_readonly("conditions", &Query::conditions)
      .def_property_readonly("tables", &Query::tables)
      .def_property_readonly("literals", &literal_infos)
      .def_property_readonly("counts_only", &Query::returns_counts_only,
                             "Every result column is a count(...) call: the query answers how many.")
      .def("render", &Query::render, "The statement written afresh from its syntax tree.")
      .def(
          "rewrite_literals",
          [](const Query& q, const py::dict& replacements) { return q.rewrite_literals(to_replacements(replacements)); },
          py::arg("replacements"), "The original text with {literal index: new value} spliced in.")
      .def(
          "inspect", [](const Query& q) { return inspect(q); },
          "Diagnostics of the static detector; the query must have been parsed with a schema.")
      .def("__repr__", [](const Query& q) { return "Query(" + py::repr(py::str(q.sql())).cast<std::string>() + ")"; });

  sql.def(
      "parse", [](const std::string& text) { return Query(text); }, py::arg("sql"),
      "Parses one SELECT statement; raises SqlSyntaxError (a relmem.Error with .offset) when it does not parse.");
  def_on_schema(sql, "parse",
                [](const std::string& text, const relmem::Schema& schema) { return Query(text, schema); });
  sql.def(
      "rewrite_literals",
      [](const std::string& text, const py::dict& replacements) {
        return rewrite_literals(text, to_replacements(replacements));
      },
      py::arg("sql"), py::arg("replacements"),
      "Replaces literals by index ({index: str | int | float | None}), keeping every other byte of the text.");
  def_on_schema(
      sql, "inspect", [](const std::string& text, const relmem::Schema& schema) { return inspect(text, schema); },
      "Static diagnostics against a schema; SQL that does not parse gives one 'syntax' diagnostic.");
  def_on_schema(
      sql, "repair_qualifiers",
      [](const std::string& text, const relmem::Schema& schema) { return repair_qualifiers(text, schema); },
      "Replaces the qualifier of a column its FROM item lacks by the one other FROM item of the same SELECT that has "
      "it, keeping every other byte of the text; raises SqlSyntaxError when the SQL does not parse.");
  def_on_schema(
      sql, "repair_joins",
      [](const std::string& text, const relmem::Schema& schema) { return repair_joins(text, schema); },
      "Joins the table of a column that no FROM item of its SELECT has, when exactly one table has it and one "
      "foreign key links that table to the FROM clause; raises SqlSyntaxError when the SQL does not parse.");
  def_on_schema(
      sql, "repair_counts",
      [](const std::string& text, const relmem::Schema& schema) { return repair_counts(text, schema); },
      "Joins the one table that references the FROM table, grouped by the referenced key, when a SELECT ranks that "
      "table's rows by a count that can only be one row each; raises SqlSyntaxError when the SQL does not parse.");
}

}  // namespace relmem_python
