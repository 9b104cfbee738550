#pragma once
// The value memory's options and fusion weights as JSON objects keyed by their field names: the manifest that
// save() writes and the dicts Python reads and sets.
#include <nlohmann/json.hpp>

#include "relmem/memories/values/value_scoring.hpp"
#include "relmem/memories/values/value_store.hpp"

namespace relmem {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ValueMemoryOptions, max_values_per_column, max_vectors_per_column, max_digit_share,
                                   max_value_chars, max_average_chars, encode_batch)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FusionWeights, case_only, normalized, abbreviation, semantic)

}  // namespace relmem
