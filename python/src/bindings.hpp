#pragma once
// One bind_* function per pipeline component, each in its own file; module.cpp calls them in order.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "relmem/catalog/executor.hpp"
#include "relmem/common.hpp"
#include "relmem/memories/memory_refresh.hpp"

namespace relmem {
struct SearchResult;
}

namespace relmem_python {
void bind_common(pybind11::module_& m);
void bind_catalog(pybind11::module_& m);
void bind_encoders(pybind11::module_& m);
void bind_bert(pybind11::module_& m);  // after bind_encoders: BertEncoder derives from Encoder
void bind_index(pybind11::module_& m);
void bind_gpu(pybind11::module_& m);  // GpuVectorIndex and CUDA device discovery
void bind_llm(pybind11::module_& m);  // the relmem._relmem.llm submodule
void bind_memories_common(pybind11::module_& m);  // RefreshReport, before the memories
void bind_memories_selection(pybind11::module_& m);  // SelectionMemory, RelevanceModel, train_relevance
void bind_schema_scores(pybind11::module_& m);  // after bind_memories_selection: a SelectionMemory method
void bind_memories_values(pybind11::module_& m);  // the relmem._relmem.values submodule
void bind_sql(pybind11::module_& m);  // the relmem._relmem.sql submodule
void bind_hybrid(pybind11::module_& m);  // the relmem._relmem.hybrid submodule (after bind_llm)
void bind_evaluation(pybind11::module_& m);  // the relmem._relmem.evaluation submodule (after bind_llm)

// SQL from Python: bytes as they are, str as UTF-8 with undecodable command-line bytes (lone surrogates) restored.
std::string sql_argument(const pybind11::object& sql);
// A path from Python (str, bytes or os.PathLike) as the file system's bytes (os.fsencode), and back (os.fsdecode):
// file names need not be UTF-8.
std::string path_argument(const pybind11::object& path);
pybind11::str path_to_python(const std::string& path);
// Text from databases, prompts and messages as a str: it is not always valid UTF-8, so undecodable bytes become
// U+FFFD instead of failing the whole result.
pybind11::str text_to_python(const std::string& text);
// A copy of a float vector as a 1-D float32 array, with its stride stated (numpy 2 reads a count-only array as stride 0).
pybind11::array_t<float> floats_to_numpy(const std::vector<float>& values);
// JSON across the boundary, through Python's json module: dicts, lists, str, numbers, bool and None.
nlohmann::json python_to_json(pybind11::handle object);
pybind11::object json_to_python(const nlohmann::json& value);
// A stored SQLite value as None, int, float, str (text_to_python) or bytes.
pybind11::object value_to_python(const relmem::Value& value);

// Hands a matrix to numpy without copying; numpy owns it from then on.
pybind11::array_t<float> to_numpy(relmem::RowMatrix&& matrix);
// Copies a vector into a new one-dimensional numpy array.
template <class T>
pybind11::array_t<T> to_numpy(const std::vector<T>& values) {
  return pybind11::array_t<T>(static_cast<pybind11::ssize_t>(values.size()), values.data());
}

// Vectors for an index: accepts (n, dim) or a single (dim,) vector; returns the row count.
int64_t check_rows(const pybind11::array_t<float, pybind11::array::c_style | pybind11::array::forcecast>& a, int dim,
                   const char* what);
// A search result as numpy (scores, ids), without copying.
pybind11::tuple to_python(relmem::SearchResult&& result);
// A memory's build/refresh progress from what relmem.progress.callback takes (None, False, True for a bar on
// stderr, or a callable (db, done, total)); the callback takes the GIL to call Python.
relmem::BuildProgress progress_from(const pybind11::object& progress, const std::string& description);
}  // namespace relmem_python
