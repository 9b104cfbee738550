// The relmem._relmem.values submodule: the data value memory, the database retriever and value post-processing.
// Results come back as typed objects with attribute access.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "../../cpp/src/memories/values/value_options_json.hpp"
#include "bindings.hpp"
#include "relmem/memories/text/string_similarity.hpp"
#include "relmem/memories/values/value_correction.hpp"
#include "relmem/memories/values/value_lexicon.hpp"
#include "relmem/sql/rewrite.hpp"

namespace py = pybind11;
using namespace relmem;

namespace relmem_python {
namespace {

// Byte offset into UTF-8 text -> index into the Python str.
size_t char_offset(const std::string& text, size_t byte_offset) {
  size_t chars = 0;
  for (size_t i = 0; i < byte_offset && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++chars;
  return chars;
}

// Results cross into Python with their spans as str indices instead of byte offsets.
ValueCondition in_chars(ValueCondition c, const std::string& sql) {
  c.start = char_offset(sql, c.start);
  c.end = char_offset(sql, c.end);
  return c;
}

ValueCheck in_chars(ValueCheck check, const std::string& sql) {
  check.condition = in_chars(std::move(check.condition), sql);
  return check;
}

std::vector<ValueLink> in_chars(std::vector<ValueLink> links, const std::string& question) {
  for (auto& link : links) {
    link.start = char_offset(question, link.start);
    link.end = char_offset(question, link.end);
  }
  return links;
}

std::vector<ValueCheck> in_chars(std::vector<ValueCheck> checks, const std::string& sql) {
  for (auto& check : checks) check = in_chars(std::move(check), sql);
  return checks;
}

// The fields every result about one SQL condition shows (ValueCondition, ValueCheck, ValueReplacement).
template <typename Class, typename Get>
void def_condition_fields(Class& c, Get condition) {
  using T = typename Class::type;
  c.def_property_readonly("literal_index", [condition](const T& x) { return condition(x).literal_index; })
      .def_property_readonly("table", [condition](const T& x) { return condition(x).table; })
      .def_property_readonly("column", [condition](const T& x) { return condition(x).column; })
      .def_property_readonly("op", [condition](const T& x) { return condition(x).op; })
      .def_property_readonly("value", [condition](const T& x) { return text_to_python(condition(x).value); })
      .def_property_readonly("start", [condition](const T& x) { return condition(x).start; })
      .def_property_readonly("end", [condition](const T& x) { return condition(x).end; });
}

// The match fields of a stored value (ValueCandidate, ValueLink).
template <typename Class, typename Get>
void def_candidate_fields(Class& c, Get candidate) {
  using T = typename Class::type;
  c.def_property_readonly("value", [candidate](const T& x) { return text_to_python(candidate(x).value); })
      .def_property_readonly("score", [candidate](const T& x) { return candidate(x).score; })
      .def_property_readonly("components", [candidate](const T& x) { return candidate(x).components; })
      .def_property_readonly("table", [candidate](const T& x) { return candidate(x).table; })
      .def_property_readonly("column", [candidate](const T& x) { return candidate(x).column; })
      .def_property_readonly("channel", [candidate](const T& x) { return candidate(x).channel; });
}

void bind_value_results(py::module_& v) {
  py::class_<MatchComponents>(v, "MatchComponents", "The evidence kinds behind a value match, each in [0, 1].")
      .def_readonly("exact", &MatchComponents::exact)
      .def_readonly("case_only", &MatchComponents::case_only)
      .def_readonly("normalized", &MatchComponents::normalized)
      .def_readonly("trigram", &MatchComponents::trigram)
      .def_readonly("edit", &MatchComponents::edit)
      .def_readonly("token", &MatchComponents::token)
      .def_readonly("abbreviation", &MatchComponents::abbreviation)
      .def_property_readonly("semantic", [](const MatchComponents& c) -> py::object {
        return c.semantic < 0 ? py::object(py::none()) : py::object(py::float_(c.semantic));
      }, "The encoder cosine; None when the column has no vectors.");

  py::class_<ValueCandidate> candidate(v, "ValueMatch", "One stored value for a written one.");
  def_candidate_fields(candidate, [](const ValueCandidate& c) -> const ValueCandidate& { return c; });
  candidate.def("__repr__", [](const ValueCandidate& c) {
    return "ValueMatch(" + py::repr(text_to_python(c.value)).cast<std::string>() + ", score=" + std::to_string(c.score) +
           ", " + c.table + "." + c.column + ", channel=" + c.channel + ")";
  });

  py::class_<ValueLink> link(v, "ValueLink", "A question span that matches a stored value; start/end index the "
                                             "question string.");
  def_candidate_fields(link, [](const ValueLink& l) -> const ValueCandidate& { return l.match; });
  link.def_property_readonly("span", [](const ValueLink& l) { return text_to_python(l.span); })
      .def_readonly("start", &ValueLink::start)
      .def_readonly("end", &ValueLink::end)
      .def("__repr__", [](const ValueLink& l) {
        return "ValueLink(" + py::repr(text_to_python(l.span)).cast<std::string>() + " -> " +
               py::repr(text_to_python(l.match.value)).cast<std::string>() + ", score=" + std::to_string(l.match.score) + ")";
      });

  py::class_<ValueCondition> condition(v, "ValueCondition", "A string literal compared with a column; start/end "
                                                            "index the SQL string (quotes included).");
  def_condition_fields(condition, [](const ValueCondition& c) -> const ValueCondition& { return c; });

  py::class_<ValueCheck> check(v, "ValueCheck", "Whether a literal of a query is stored, and the similar values "
                                                "when it is not.");
  def_condition_fields(check, [](const ValueCheck& c) -> const ValueCondition& { return c.condition; });
  check.def_property_readonly("status", [](const ValueCheck& c) { return value_status_name(c.status); },
                              "'found', 'found_ignoring_case' or 'not_found'")
      .def_property_readonly("case_matches", [](const ValueCheck& c) {
        py::list out;
        for (const auto& value : c.case_matches) out.append(text_to_python(value));
        return out;
      })
      .def_readonly("similar", &ValueCheck::similar)
      .def("__repr__", [](const ValueCheck& c) {
        return "ValueCheck(" + py::repr(text_to_python(c.condition.value)).cast<std::string>() + " " + c.condition.table + "." +
               c.condition.column + ": " + value_status_name(c.status) + ")";
      });

  py::class_<ValueReplacement> replacement(v, "ValueReplacement", "A literal correct_values replaced.");
  def_condition_fields(replacement, [](const ValueReplacement& r) -> const ValueCondition& { return r.condition; });
  replacement.def_property_readonly("replacement", [](const ValueReplacement& r) { return text_to_python(r.replacement); })
      .def_readonly("reason", &ValueReplacement::reason)
      .def_readonly("channel", &ValueReplacement::channel)
      .def_readonly("score", &ValueReplacement::score)
      .def_readonly("margin", &ValueReplacement::margin)
      .def_readonly("confidence", &ValueReplacement::confidence);

  py::class_<KeyLookup> lookup(v, "KeyLookup",
                               "A comparison with a foreign key correct_values rewrote into a lookup of the keys: "
                               "column IN (SELECT key FROM lookup_table WHERE lookup_column = value).");
  def_condition_fields(lookup, [](const KeyLookup& l) -> const ValueCondition& { return l.condition; });
  lookup.def_readonly("lookup_table", &KeyLookup::table)
      .def_readonly("key", &KeyLookup::key)
      .def_readonly("lookup_column", &KeyLookup::column);

  py::class_<CorrectionResult>(v, "CorrectionResult",
                               "The corrected SQL, what was replaced, the key lookups and every check.")
      .def_property_readonly("sql", [](const CorrectionResult& r) { return text_to_python(r.sql); })
      .def_readonly("replacements", &CorrectionResult::replacements)
      .def_readonly("lookups", &CorrectionResult::lookups)
      .def_readonly("checks", &CorrectionResult::checks);

  py::class_<ColumnValues>(v, "ColumnValues", "What the value memory keeps for one column.")
      .def_readonly("table", &ColumnValues::table)
      .def_readonly("column", &ColumnValues::column)
      .def_readonly("declared_type", &ColumnValues::declared_type)
      .def_property_readonly("kind", [](const ColumnValues& c) { return column_kind_name(c.kind); })
      .def_readonly("indexed_values", &ColumnValues::count)
      .def_readonly("text_values", &ColumnValues::text_values)
      .def_readonly("truncated", &ColumnValues::truncated)
      .def_readonly("skipped_long", &ColumnValues::skipped_long)
      .def_readonly("average_chars", &ColumnValues::average_chars)
      .def_readonly("vectors", &ColumnValues::vectors)
      .def_property_readonly("min", [](const ColumnValues& c) { return value_to_python(c.min); })
      .def_property_readonly("max", [](const ColumnValues& c) { return value_to_python(c.max); })
      .def("__repr__", [](const ColumnValues& c) {
        return "ColumnValues(" + c.table + "." + c.column + ", " + column_kind_name(c.kind) + ", " +
               std::to_string(c.count) + " values)";
      });

  py::class_<ValueAlias>(v, "ValueAlias", "A learned mapping from a written value to a stored one, with provenance.")
      .def_readonly("db", &ValueAlias::db)
      .def_readonly("table", &ValueAlias::table)
      .def_readonly("column", &ValueAlias::column)
      .def_property_readonly("written", [](const ValueAlias& a) { return text_to_python(a.written); })
      .def_property_readonly("stored", [](const ValueAlias& a) { return text_to_python(a.stored); })
      .def_readonly("source", &ValueAlias::source)
      .def_property_readonly("evidence", [](const ValueAlias& a) { return text_to_python(a.evidence); })
      .def_readonly("created", &ValueAlias::created)
      .def_readonly("uses", &ValueAlias::uses)
      .def("__repr__", [](const ValueAlias& a) {
        return "ValueAlias(" + a.db + "." + a.table + "." + a.column + ": '" + a.written + "' -> '" + a.stored +
               "', source='" + a.source + "', uses=" + std::to_string(a.uses) + ")";
      });

  py::class_<MemoryUsage>(v, "MemoryUsage", "Bytes of the value memory's strings, lexical structures and vectors.")
      .def_readonly("string_bytes", &MemoryUsage::string_bytes)
      .def_readonly("lexical_bytes", &MemoryUsage::lexical_bytes)
      .def_readonly("vector_bytes", &MemoryUsage::vector_bytes)
      .def_property_readonly("total_bytes", &MemoryUsage::total)
      .def("__repr__", [](const MemoryUsage& u) {
        return "MemoryUsage(string_bytes=" + std::to_string(u.string_bytes) + ", lexical_bytes=" +
               std::to_string(u.lexical_bytes) + ", vector_bytes=" + std::to_string(u.vector_bytes) +
               ", total_bytes=" + std::to_string(u.total()) + ")";
      });
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

void set_weights(FusionWeights& w, const py::dict& d) {
  nlohmann::json weights = w;
  for (const auto& [key, value] : d) {
    const std::string name = py::str(key);
    if (!weights.contains(name)) throw Error("unknown fusion weight '" + name + "'");
    weights[name] = value.cast<double>();
  }
  w = weights.get<FusionWeights>();
}

}  // namespace

void bind_memories_values(py::module_& m) {
  auto v = m.def_submodule("values", "Data value memory, database retriever and value post-processing.");
  bind_value_results(v);

  py::class_<ValueMemory>(v, "ValueMemory", "Distinct stored values per column, for lookups and corrections.")
      .def_static(
          "build",
          [](const Catalog& catalog, std::shared_ptr<Encoder> encoder, const py::object& progress, int64_t max_values,
             int64_t max_vectors, double max_digit_share, int max_value_chars, double max_average_chars,
             int encode_batch) {
            const auto options = options_from(max_values, max_vectors, max_digit_share, max_value_chars,
                                              max_average_chars, encode_batch);
            const auto callback = progress_from(progress, "value memory");
            py::gil_scoped_release release;
            return ValueMemory::build(catalog, std::move(encoder), options, callback);
          },
          py::arg("catalog"), py::arg("encoder"), py::arg("progress") = false,
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
            const auto callback = progress_from(progress, "value memory refresh");
            RefreshReport report;
            {
              py::gil_scoped_release release;
              report = memory.refresh(catalog, callback);
            }
            return report;
          },
          py::arg("catalog"), py::arg("progress") = false)
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
            return found;
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
            return in_chars(std::move(links), question);
          },
          py::arg("db"), py::arg("question"), py::arg("k") = LinkOptions{}.k,
          py::arg("min_score") = LinkOptions{}.min_score, py::arg("max_span_words") = LinkOptions{}.max_span_words)
      .def(
          "link_all",
          [](const ValueMemory& memory, const std::vector<std::string>& dbs, const std::string& question, int k,
             double min_score, int max_span_words) {
            LinkOptions options;
            options.k = k;
            options.min_score = min_score;
            options.max_span_words = max_span_words;
            std::vector<std::vector<ValueLink>> all;
            {
              py::gil_scoped_release release;
              all = memory.link_all(dbs, question, options);
            }
            for (auto& links : all) links = in_chars(std::move(links), question);
            return all;
          },
          py::arg("dbs"), py::arg("question"), py::arg("k") = LinkOptions{}.k,
          py::arg("min_score") = LinkOptions{}.min_score, py::arg("max_span_words") = LinkOptions{}.max_span_words)
      .def_property_readonly("databases", &ValueMemory::databases)
      .def("__contains__", &ValueMemory::contains)
      .def("__len__", [](const ValueMemory& memory) { return memory.databases().size(); })
      .def(
          "column",
          [](const ValueMemory& memory, const std::string& db, const std::string& table,
             const std::string& column) -> py::object {
            const auto values = memory.find_database(db);
            const ColumnValues* c = values ? values->find_column(table, column) : nullptr;
            return c ? py::cast(*c) : py::object(py::none());
          },
          py::arg("db"), py::arg("table"), py::arg("column"))
      .def(
          "columns",
          [](const ValueMemory& memory, const std::string& db) { return memory.database(db)->columns; },
          py::arg("db"))
      .def_property_readonly("memory_usage", &ValueMemory::memory_usage)
      .def_property_readonly("memory_bytes", [](const ValueMemory& memory) { return memory.memory_usage().total(); })
      .def_property_readonly(
          "encoder",
          [](const ValueMemory& memory) { return std::const_pointer_cast<Encoder>(memory.shared_encoder()); })
      .def_property_readonly("options", [](const ValueMemory& memory) { return json_to_python(memory.options()); })
      .def_property(
          "weights", [](const ValueMemory& memory) { return json_to_python(memory.weights()); },
          [](ValueMemory& memory, const py::dict& d) { set_weights(memory.weights(), d); })
      .def(
          "check_values",
          [](const ValueMemory& memory, const std::string& sql, const std::string& db, const Catalog& catalog, int k) {
            std::vector<ValueCheck> checks;
            {
              py::gil_scoped_release release;
              checks = check_values(sql, db, catalog, memory, k);
            }
            const std::string feedback = value_feedback(checks);
            return py::make_tuple(in_chars(std::move(checks), sql), feedback);
          },
          py::arg("sql"), py::arg("db"), py::arg("catalog"), py::arg("k") = 5,
          "(checks, feedback text) for the string literals of `sql`.")
      .def(
          "correct_values",
          [](const ValueMemory& memory, const std::string& sql, const std::string& db, const Catalog& catalog,
             double min_score, double min_margin, int k, std::optional<double> min_confidence) {
            CorrectionOptions options;
            options.min_confidence = min_confidence;
            options.min_score = min_score;
            options.min_margin = min_margin;
            options.k = k;
            CorrectionResult result;
            {
              py::gil_scoped_release release;
              result = correct_values(sql, db, catalog, memory, options);
            }
            for (auto& r : result.replacements) r.condition = in_chars(std::move(r.condition), sql);
            result.checks = in_chars(std::move(result.checks), sql);
            return result;
          },
          py::arg("sql"), py::arg("db"), py::arg("catalog"), py::arg("min_score") = CorrectionOptions{}.min_score,
          py::arg("min_margin") = CorrectionOptions{}.min_margin, py::arg("k") = CorrectionOptions{}.k,
          py::arg("min_confidence") = py::none())
      .def("add_alias", &ValueMemory::add_alias, py::arg("db"), py::arg("table"), py::arg("column"),
           py::arg("written"), py::arg("stored"), py::arg("source"), py::arg("evidence") = "")
      .def("remove_alias", &ValueMemory::remove_alias, py::arg("db"), py::arg("table"), py::arg("column"),
           py::arg("written"))
      .def("aliases", &ValueMemory::aliases, py::arg("db") = "", py::arg("table") = "", py::arg("column") = "")
      .def("save_aliases", &ValueMemory::save_aliases, py::arg("folder"))
      .def("__repr__", [](const ValueMemory& memory) {
        return "ValueMemory(" + std::to_string(memory.databases().size()) + " databases, " + memory.encoder().name() +
               ")";
      });

  py::dict defaults;
  defaults["min_score"] = CorrectionOptions{}.min_score;
  defaults["min_margin"] = CorrectionOptions{}.min_margin;
  defaults["k"] = CorrectionOptions{}.k;
  defaults["min_confidence"] = py::none();  // the threshold of the confidence model of the memory's encoder
  v.attr("CORRECTION_DEFAULTS") = defaults;

  // What scripts/fit_value_confidence.py fits: the features of one replacement, and the model of each encoder.
  v.attr("CONFIDENCE_FEATURES") = confidence_feature_names();
  v.def(
      "confidence_model",
      [](const std::string& encoder) {
        const ConfidenceModel& fitted = ConfidenceModel::fitted(encoder);
        py::dict model;
        model["weights"] = std::vector<double>(fitted.weights.begin(), fitted.weights.end());
        model["threshold"] = fitted.threshold;
        return model;
      },
      py::arg("encoder"),
      "{weights, threshold} of the replacement confidence fitted for an encoder's name (a fine-tuned 'minilm:DIR' "
      "has MiniLM's; USE-lite's for an encoder without a fit of its own).");
  v.def(
      "replacement_evidence",
      [](const std::string& written, const std::vector<ValueCandidate>& similar, uint32_t column_values) {
        if (similar.empty()) throw Error("replacement_evidence needs at least one candidate");
        const auto e = replacement_evidence(written, similar, column_values);
        return py::make_tuple(std::vector<double>(e.features.begin(), e.features.end()), e.gate);
      },
      py::arg("written"), py::arg("similar"), py::arg("column_values"),
      "(features, gate) of replacing `written` by similar[0] (names: CONFIDENCE_FEATURES; gate: \"\" or why never).");

  v.def(
      "value_conditions",
      [](const std::string& sql, const Schema& schema) {
        std::vector<ValueCondition> out;
        for (const auto& c : value_conditions(sql, schema)) out.push_back(in_chars(c, sql));
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
      "lexicon_info",
      [] {
        const ValueLexicon& lexicon = ValueLexicon::shared();
        py::dict d;
        d["concepts"] = lexicon.concepts();
        d["synsets"] = lexicon.synsets();
        d["missing_sources"] = lexicon.missing_sources();
        return d;
      },
      "What the meaning channels were loaded from: concept and WordNet synset counts, sources that are missing.");
  v.def(
      "aliases_in_folder",
      [](const std::string& folder) { return ValueAliases::load(aliases_path(folder)).list(); }, py::arg("folder"),
      "The aliases saved in a value memory folder, without loading the memory.");
  v.def(
      "remove_alias_in_folder",
      [](const std::string& folder, const std::string& db, const std::string& table, const std::string& column,
         const std::string& written) {
        ValueAliases aliases = ValueAliases::load(aliases_path(folder));
        const bool removed = aliases.remove(db, table, column, written);
        if (removed) aliases.save(aliases_path(folder));
        return removed;
      },
      py::arg("folder"), py::arg("db"), py::arg("table"), py::arg("column"), py::arg("written"),
      "Removes one alias from a saved value memory folder; False when it had none.");
  v.def(
      "abbreviation_score",
      [](const std::string& a, const std::string& b) {
        return abbreviation_score(value_tokens(normalize_value(a)), value_tokens(normalize_value(b)));
      },
      py::arg("a"), py::arg("b"));
}

}  // namespace relmem_python
