#include "bindings.hpp"

PYBIND11_MODULE(_relmem, m) {
  m.doc() = "relmem C++ core";
  relmem_python::bind_common(m);
  relmem_python::bind_catalog(m);
  relmem_python::bind_encoders(m);
  relmem_python::bind_bert(m);
  relmem_python::bind_index(m);
  relmem_python::bind_gpu(m);
  relmem_python::bind_llm(m);
  relmem_python::bind_memories_common(m);
  relmem_python::bind_memories_selection(m);
  relmem_python::bind_schema_scores(m);
  relmem_python::bind_memories_values(m);
  relmem_python::bind_sql(m);
  relmem_python::bind_hybrid(m);
  relmem_python::bind_evaluation(m);
}
