// The relmem._relmem.values submodule: the data value memory, the database retriever and value post-processing.
// Results come back as plain dicts and lists so they print, serialize to JSON and load into pandas as they are.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relmem/memories/text/string_similarity.hpp"
#include "relmem/memories/values/value_correction.hpp"
#include "relmem/sql/rewrite.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {
namespace {

py::str utf8(const std::string& text) {
  PyObject* out = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (!out) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(out);
}

py::object value_object(const Value& value) {
  if (auto* i = std::get_if<int64_t>(&value)) return py::int_(*i);
  if (auto* d = std::get_if<double>(&value)) return py::float_(*d);
  if (auto* s = std::get_if<std::string>(&value)) return utf8(*s);
  return py::none();
}

py::dict components_dict(const MatchComponents& c) {
  py::dict d;
  d["exact"] = c.exact;
  d["case_only"] = c.case_only;
  d["normalized"] = c.normalized;
  d["trigram"] = c.trigram;
  d["edit"] = c.edit;
  d["token"] = c.token;
  d["abbreviation"] = c.abbreviation;
  d["semantic"] = c.semantic < 0 ? py::object(py::none()) : py::object(py::float_(c.semantic));
  return d;
}

py::dict candidate_dict(const ValueCandidate& c) {
  py::dict d;
  d["value"] = utf8(c.value);
  d["score"] = c.score;
  d["components"] = components_dict(c.components);
  d["table"] = c.table;
  d["column"] = c.column;
  return d;
}

py::list candidates_list(const std::vector<ValueCandidate>& candidates) {
  py::list out;
  for (const auto& c : candidates) out.append(candidate_dict(c));
  return out;
}

// Byte offset into UTF-8 text -> index into the Python str.
size_t char_offset(const std::string& text, size_t byte_offset) {
  size_t chars = 0;
  for (size_t i = 0; i < byte_offset && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++chars;
  return chars;
}

py::dict column_dict(const ColumnValues& c) {
  py::dict d;
  d["table"] = c.table;
  d["column"] = c.column;
  d["declared_type"] = c.declared_type;
  d["kind"] = column_kind_name(c.kind);
  d["indexed_values"] = c.count;
  d["text_values"] = c.text_values;
  d["truncated"] = c.truncated;
  d["skipped_long"] = c.skipped_long;
  d["average_chars"] = c.average_chars;
  d["vectors"] = c.vectors;
  d["min"] = value_object(c.min);
  d["max"] = value_object(c.max);
  return d;
}

py::dict condition_dict(const ValueCondition& c, const std::string& sql) {
  py::dict d;
  d["literal_index"] = c.literal_index;
  d["table"] = c.table;
  d["column"] = c.column;
  d["op"] = c.op;
  d["value"] = utf8(c.value);
  d["start"] = char_offset(sql, c.start);
  d["end"] = char_offset(sql, c.end);
  return d;
}

py::dict check_dict(const ValueCheck& check, const std::string& sql) {
  py::dict d = condition_dict(check.condition, sql);
  d["status"] = value_status_name(check.status);
  py::list cased;
  for (const auto& v : check.case_matches) cased.append(utf8(v));
  d["case_matches"] = cased;
  d["similar"] = candidates_list(check.similar);
  return d;
}

ValueMemoryOptions options_from(int64_t max_values, int64_t max_vectors, double max_digit_share, int max_value_chars,
                                double max_average_chars, int encode_batch) {
  ValueMemoryOptions o;
  o.max_values_per_column = max_values;
  o.max_vectors_per_column = max_vectors;
  o.max_digit_share = max_digit_share;
  o.max_value_chars = max_value_chars;
  o.max_average_chars = max_average_chars;
  o.encode_batch = encode_batch;
  return o;
}

py::dict options_dict(const ValueMemoryOptions& o) {
  py::dict d;
  d["max_values_per_column"] = o.max_values_per_column;
  d["max_vectors_per_column"] = o.max_vectors_per_column;
  d["max_digit_share"] = o.max_digit_share;
  d["max_value_chars"] = o.max_value_chars;
  d["max_average_chars"] = o.max_average_chars;
  d["encode_batch"] = o.encode_batch;
  return d;
}

// The progress callback runs between databases on the thread that builds; it takes the GIL to call Python.
ValueMemory::Progress progress_from(const py::object& callback) {
  if (callback.is_none()) return {};
  auto shared = std::make_shared<py::object>(callback);
  return [shared](const std::string& db, size_t done, size_t total) {
    py::gil_scoped_acquire gil;
    (*shared)(db, done, total);
  };
}

py::dict refresh_dict(const RefreshReport& r) {
  py::dict d;
  d["added"] = r.added;
  d["updated"] = r.updated;
  d["removed"] = r.removed;
  d["unchanged"] = r.unchanged;
  return d;
}

py::dict weights_dict(const FusionWeights& w) {
  py::dict d;
  d["case_only"] = w.case_only;
  d["normalized"] = w.normalized;
  d["abbreviation"] = w.abbreviation;
  d["semantic"] = w.semantic;
  return d;
}

void set_weights(FusionWeights& w, const py::dict& d) {
  for (const auto& [key, value] : d) {
    const std::string name = py::str(key);
    const double x = value.cast<double>();
    if (name == "case_only")
      w.case_only = x;
    else if (name == "normalized")
      w.normalized = x;
    else if (name == "abbreviation")
      w.abbreviation = x;
    else if (name == "semantic")
      w.semantic = x;
    else
      throw Error("unknown fusion weight '" + name + "'");
  }
}

}  // namespace

void bind_memories_values(py::module_& m) {
  auto v = m.def_submodule("values", "Data value memory, database retriever and value post-processing.");

  py::class_<ValueMemory>(v, "ValueMemory", "Distinct stored values per column, for lookups and corrections.")
      .def_static(
          "build",
          [](const Catalog& catalog, std::shared_ptr<Encoder> encoder, const py::object& progress, int64_t max_values,
             int64_t max_vectors, double max_digit_share, int max_value_chars, double max_average_chars,
             int encode_batch) {
            const auto options = options_from(max_values, max_vectors, max_digit_share, max_value_chars,
                                              max_average_chars, encode_batch);
            const auto callback = progress_from(progress);
            py::gil_scoped_release release;
            return ValueMemory::build(catalog, std::move(encoder), options, callback);
          },
          py::arg("catalog"), py::arg("encoder"), py::arg("progress") = py::none(),
          py::arg("max_values_per_column") = ValueMemoryOptions{}.max_values_per_column,
          py::arg("max_vectors_per_column") = ValueMemoryOptions{}.max_vectors_per_column,
          py::arg("max_digit_share") = ValueMemoryOptions{}.max_digit_share,
          py::arg("max_value_chars") = ValueMemoryOptions{}.max_value_chars,
          py::arg("max_average_chars") = ValueMemoryOptions{}.max_average_chars,
          py::arg("encode_batch") = ValueMemoryOptions{}.encode_batch)
      .def_static(
          "load",
          [](const std::string& folder, std::shared_ptr<Encoder> encoder) {
            py::gil_scoped_release release;
            return ValueMemory::load(folder, std::move(encoder));
          },
          py::arg("folder"), py::arg("encoder") = nullptr)
      .def("save", &ValueMemory::save, py::arg("folder"), py::call_guard<py::gil_scoped_release>())
      .def(
          "refresh",
          [](ValueMemory& memory, const Catalog& catalog, const py::object& progress) {
            const auto callback = progress_from(progress);
            RefreshReport report;
            {
              py::gil_scoped_release release;
              report = memory.refresh(catalog, callback);
            }
            return refresh_dict(report);
          },
          py::arg("catalog"), py::arg("progress") = py::none())
      .def("add_database", &ValueMemory::add_database, py::arg("catalog"), py::arg("db"),
           py::call_guard<py::gil_scoped_release>())
      .def("remove_database", &ValueMemory::remove_database, py::arg("db"))
      .def(
          "lookup",
          [](const ValueMemory& memory, const std::string& db, const std::string& table, const std::string& column,
             const std::string& value, int k) {
            std::vector<ValueCandidate> found;
            {
              py::gil_scoped_release release;
              found = memory.lookup(db, table, column, value, k);
            }
            return candidates_list(found);
          },
          py::arg("db"), py::arg("table"), py::arg("column"), py::arg("value"), py::arg("k") = 10)
      .def(
          "link",
          [](const ValueMemory& memory, const std::string& db, const std::string& question, int k, double min_score,
             int max_span_words) {
            LinkOptions options;
            options.k = k;
            options.min_score = min_score;
            options.max_span_words = max_span_words;
            std::vector<ValueLink> links;
            {
              py::gil_scoped_release release;
              links = memory.link(db, question, options);
            }
            py::list out;
            for (const auto& link : links) {
              py::dict d = candidate_dict(link.match);
              d["span"] = utf8(link.span);
              d["start"] = char_offset(question, link.start);
              d["end"] = char_offset(question, link.end);
              out.append(d);
            }
            return out;
          },
          py::arg("db"), py::arg("question"), py::arg("k") = LinkOptions{}.k,
          py::arg("min_score") = LinkOptions{}.min_score, py::arg("max_span_words") = LinkOptions{}.max_span_words)
      .def_property_readonly("databases", &ValueMemory::databases)
      .def("__contains__", &ValueMemory::contains)
      .def("__len__", [](const ValueMemory& memory) { return memory.databases().size(); })
      .def(
          "column",
          [](const ValueMemory& memory, const std::string& db, const std::string& table,
             const std::string& column) -> py::object {
            const ColumnValues* c = memory.column(db, table, column);
            return c ? py::object(column_dict(*c)) : py::object(py::none());
          },
          py::arg("db"), py::arg("table"), py::arg("column"))
      .def(
          "columns",
          [](const ValueMemory& memory, const std::string& db) {
            py::list out;
            for (const auto& c : memory.database(db).columns) out.append(column_dict(c));
            return out;
          },
          py::arg("db"))
      .def_property_readonly("memory_usage",
                             [](const ValueMemory& memory) {
                               const MemoryUsage usage = memory.memory_usage();
                               py::dict d;
                               d["string_bytes"] = usage.string_bytes;
                               d["lexical_bytes"] = usage.lexical_bytes;
                               d["vector_bytes"] = usage.vector_bytes;
                               d["total_bytes"] = usage.total();
                               return d;
                             })
      .def_property_readonly(
          "encoder",
          [](const ValueMemory& memory) { return std::const_pointer_cast<Encoder>(memory.shared_encoder()); })
      .def_property_readonly("options", [](const ValueMemory& memory) { return options_dict(memory.options()); })
      .def_property(
          "weights", [](const ValueMemory& memory) { return weights_dict(memory.weights()); },
          [](ValueMemory& memory, const py::dict& d) { set_weights(memory.weights(), d); })
      .def(
          "check_values",
          [](const ValueMemory& memory, const std::string& sql, const std::string& db, const Catalog& catalog, int k) {
            std::vector<ValueCheck> checks;
            {
              py::gil_scoped_release release;
              checks = check_values(sql, db, catalog, memory, k);
            }
            py::list out;
            for (const auto& c : checks) out.append(check_dict(c, sql));
            return py::make_tuple(out, value_feedback(checks));
          },
          py::arg("sql"), py::arg("db"), py::arg("catalog"), py::arg("k") = 5,
          "(checks, feedback text) for the string literals of `sql`.")
      .def(
          "correct_values",
          [](const ValueMemory& memory, const std::string& sql, const std::string& db, const Catalog& catalog,
             double min_score, double min_margin, int k) {
            CorrectionOptions options;
            options.min_score = min_score;
            options.min_margin = min_margin;
            options.k = k;
            CorrectionResult result;
            {
              py::gil_scoped_release release;
              result = correct_values(sql, db, catalog, memory, options);
            }
            py::list replacements, checks;
            for (const auto& r : result.replacements) {
              py::dict d = condition_dict(r.condition, sql);
              d["replacement"] = utf8(r.replacement);
              d["reason"] = r.reason;
              d["score"] = r.score;
              d["margin"] = r.margin;
              replacements.append(d);
            }
            for (const auto& c : result.checks) checks.append(check_dict(c, sql));
            py::dict out;
            out["sql"] = utf8(result.sql);
            out["replacements"] = replacements;
            out["checks"] = checks;
            return out;
          },
          py::arg("sql"), py::arg("db"), py::arg("catalog"), py::arg("min_score") = CorrectionOptions{}.min_score,
          py::arg("min_margin") = CorrectionOptions{}.min_margin, py::arg("k") = CorrectionOptions{}.k)
      .def("__repr__", [](const ValueMemory& memory) {
        return "ValueMemory(" + std::to_string(memory.databases().size()) + " databases, " + memory.encoder().name() +
               ")";
      });

  py::dict defaults;
  defaults["min_score"] = CorrectionOptions{}.min_score;
  defaults["min_margin"] = CorrectionOptions{}.min_margin;
  defaults["k"] = CorrectionOptions{}.k;
  v.attr("CORRECTION_DEFAULTS") = defaults;

  v.def(
      "value_conditions",
      [](const std::string& sql, const Schema& schema) {
        py::list out;
        for (const auto& c : value_conditions(sql, schema)) out.append(condition_dict(c, sql));
        return out;
      },
      py::arg("sql"), py::arg("schema"),
      "String literals compared with a column (=, !=, IN, LIKE, GLOB): literal_index, table, column, op, value, "
      "start, end.");
  v.def(
      "rewrite_string_literals",
      [](const std::string& sql, const std::map<int, std::string>& values) {
        std::map<int, sql::LiteralValue> replacements;
        for (const auto& [index, value] : values) replacements.emplace(index, sql::LiteralValue::string(value));
        return sql::rewrite_literals(sql, replacements);
      },
      py::arg("sql"), py::arg("values"), "Replaces literals (by literal_index) with string values in place.");
  v.def("normalize_value", &normalize_value, py::arg("text"));
  v.def(
      "abbreviation_score",
      [](const std::string& a, const std::string& b) {
        return abbreviation_score(value_tokens(normalize_value(a)), value_tokens(normalize_value(b)));
      },
      py::arg("a"), py::arg("b"));
}

}  // namespace relmem_python
