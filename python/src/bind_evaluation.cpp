// relmem._relmem.evaluation: the scripted stand-ins benchmarks run with (relmem_evaluation, not the core library).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "relmem/evaluation/oracle_filler.hpp"

namespace py = pybind11;
using namespace pybind11::literals;
using namespace relmem;
using namespace relmem::evaluation;

namespace relmem_python {
namespace {

OracleSource source_from_python(py::handle item) {
  const auto json = python_to_json(item);
  OracleSource source;
  source.database = json.at("database").get<std::string>();
  source.path = json.at("path").get<std::string>();
  if (json.contains("dropped")) source.dropped = json["dropped"].get<std::map<std::string, std::string>>();
  if (json.contains("keys")) source.keys = json["keys"].get<std::map<std::string, std::vector<std::string>>>();
  return source;
}

}  // namespace

void bind_evaluation(py::module_& m) {
  auto e = m.def_submodule("evaluation", "Scripted stand-ins for LLMs, for benchmarks of relmem's machinery.");

  py::class_<OracleFiller, LLM, std::shared_ptr<OracleFiller>>(
      e, "OracleFiller",
      "A scripted LLM answering relmem's hybrid fill requests from the original databases, with `error_rate`\n"
      "of its values wrong. It measures relmem's machinery, not an LLM. sources: [{'database', 'path',\n"
      "'dropped': {'table.column' or relation: meaning}, 'keys': {table: [key columns]}}].")
      .def(py::init([](py::list sources, double error_rate, uint64_t seed) {
             std::vector<OracleSource> out;
             for (py::handle item : sources) out.push_back(source_from_python(item));
             return std::make_shared<OracleFiller>(std::move(out), OracleOptions{error_rate, seed});
           }),
           "sources"_a, "error_rate"_a = 0.0, "seed"_a = 13)
      .def_property_readonly("calls", &OracleFiller::calls)
      .def_property_readonly("unanswered_items", &OracleFiller::unanswered_items,
                             "Function items it could not tie to a dropped column (answered null).");
}

}  // namespace relmem_python
