// relmem._relmem.hybrid: virtual columns and LLM functions for hybrid queries. Declarations, statistics and
// provenance cross the boundary as JSON (Python dicts); execute() releases the GIL while SQL and the LLM work.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "relmem/hybrid/filler.hpp"
#include "relmem/hybrid/hybrid_session.hpp"

namespace py = pybind11;
using namespace pybind11::literals;
using namespace relmem;
using namespace relmem::hybrid;

namespace relmem_python {
namespace {

FillMode parse_mode(const std::string& mode) {
  if (mode == "lazy") return FillMode::Lazy;
  if (mode == "whole" || mode == "hqdl") return FillMode::Whole;
  throw Error("hybrid mode must be 'lazy' or 'whole' (HQDL), not '" + mode + "'");
}

}  // namespace

void bind_hybrid(py::module_& m) {
  auto h = m.def_submodule("hybrid", "Hybrid queries: LLM-filled virtual columns and LLM functions inside SQL.");

  py::class_<FillStore, std::shared_ptr<FillStore>>(
      h, "FillStore", "relmem's own SQLite file keeping every value an LLM filled, with its provenance.")
      .def(py::init<const std::string&>(), "path"_a)
      .def_property_readonly("path", &FillStore::path)
      .def("size", &FillStore::size, "Stored values.")
      .def("requests", &FillStore::requests, "Stored LLM requests.")
      .def("scopes", &FillStore::scopes)
      .def("values", [](const FillStore& s, const std::string& scope) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, value] : s.values(scope)) out[key] = value;
        return json_to_python(out);
      }, "scope"_a, "{key: value} of one scope (key: the JSON of the row's key values or the function's inputs).")
      .def("record", [](const FillStore& s, const std::string& scope, const std::string& key) -> py::object {
        const auto record = s.record(scope, key);
        if (!record) return py::none();
        const auto& p = record->provenance;
        return json_to_python({{"value", record->value}, {"reason", record->reason}, {"model", p.model},
                          {"prompt_hash", p.prompt_hash}, {"raw_answer", p.raw_answer},
                          {"prompt_tokens", p.prompt_tokens}, {"completion_tokens", p.completion_tokens},
                          {"created_at", p.created_at}});
      }, "scope"_a, "key"_a, "The value with its reason and provenance (model, prompt hash, raw answer, time).");

  py::class_<Filler, std::shared_ptr<Filler>>(
      h, "Filler", "Asks an LLM for values, batch_size items per request, and keeps them in a FillStore.")
      .def(py::init([](std::shared_ptr<LLM> llm, std::shared_ptr<FillStore> store, int batch_size,
                       int max_shown_allowed, int max_tokens) {
             return std::make_shared<Filler>(std::move(llm), std::move(store),
                                             FillerOptions{batch_size, max_shown_allowed, max_tokens});
           }),
           "llm"_a, "store"_a, "batch_size"_a = 40, "max_shown_allowed"_a = 400, "max_tokens"_a = 0)
      .def_property_readonly("store", &Filler::store)
      .def_property_readonly("llm", &Filler::llm);

  py::class_<HybridSession, std::shared_ptr<HybridSession>>(
      h, "HybridSession",
      "One database (opened read-only) extended with declared virtual columns, relations and value tables, and\n"
      "with the SQL functions llm_map, llm_map_in, llm_qa, llm_qa_in and llm_match.")
      .def(py::init([](const std::string& database, const std::string& path, py::handle schema,
                       std::shared_ptr<Filler> filler, const std::string& mode, double timeout, int64_t max_rows,
                       int max_rounds) {
             HybridOptions options;
             options.mode = parse_mode(mode);
             options.exec.timeout_seconds = timeout;
             options.exec.max_rows = max_rows;
             options.max_rounds = max_rounds;
             return std::make_shared<HybridSession>(database, path, HybridSchema::from_json(python_to_json(schema)),
                                                    std::move(filler), options);
           }),
           "database"_a, "path"_a, "schema"_a, "filler"_a, "mode"_a = "lazy", "timeout"_a = 10.0,
           "max_rows"_a = 10000, "max_rounds"_a = 12)
      .def("execute", [](HybridSession& s, const std::string& sql) {
        HybridResult result;
        {
          py::gil_scoped_release release;
          result = s.execute(sql);
        }
        return py::make_tuple(result.result, json_to_python(result.stats.to_json()));
      }, "sql"_a, "Runs one read-only SELECT/WITH; returns (QueryResult, stats dict: rounds, fills, by_kind, requests).")
      .def("fill_all", [](HybridSession& s) {
        FillReport report;
        {
          py::gil_scoped_release release;
          report = s.fill_all();
        }
        return json_to_python(report.to_json());
      }, "Fills every row of every declared column and relation (HQDL's baseline); returns the fill report.")
      .def("prefill", [](HybridSession& s, const std::string& target, py::handle keys, std::vector<std::string> columns) {
        std::vector<nlohmann::json> rows;
        for (const auto& key : python_to_json(keys)) rows.push_back(key);
        FillReport report;
        {
          py::gil_scoped_release release;
          report = s.prefill(target, rows, columns);
        }
        return json_to_python(report.to_json());
      }, "target"_a, "keys"_a, "columns"_a = std::vector<std::string>{},
         "Fills the named virtual columns of `target` (a table, or a relation: no columns) for the rows whose key\n"
         "values are given (list of {key column: value}), where the store lacks them; returns the fill report.")
      .def_property("mode",
                    [](HybridSession& s) { return s.options().mode == FillMode::Lazy ? "lazy" : "whole"; },
                    [](HybridSession& s, const std::string& mode) { s.options().mode = parse_mode(mode); })
      .def_property_readonly("database", &HybridSession::database)
      .def_property_readonly("schema", [](const HybridSession& s) { return json_to_python(s.schema().to_json()); },
                             "The declarations with the resolved key columns.");
}

}  // namespace relmem_python
