#include "relmem/common.hpp"
#include "relmem/index/gpu/vector_store.hpp"

namespace relmem::gpu {

SearchAlgorithm parse_search_algorithm(const std::string& name) {
  if (name == "auto") return SearchAlgorithm::Auto;
  if (name == "fused") return SearchAlgorithm::Fused;
  if (name == "fused_simt") return SearchAlgorithm::FusedSimt;
  if (name == "gemm_select") return SearchAlgorithm::GemmSelect;
  if (name == "gemm_sort") return SearchAlgorithm::GemmSort;
  throw Error("unknown search algorithm '" + name +
              "' (expected auto, fused, fused_simt, gemm_select or gemm_sort)");
}

std::string search_algorithm_name(SearchAlgorithm algorithm) {
  switch (algorithm) {
    case SearchAlgorithm::Auto: return "auto";
    case SearchAlgorithm::Fused: return "fused";
    case SearchAlgorithm::FusedSimt: return "fused_simt";
    case SearchAlgorithm::GemmSelect: return "gemm_select";
    case SearchAlgorithm::GemmSort: return "gemm_sort";
  }
  throw Error("invalid search algorithm value");
}

}  // namespace relmem::gpu
