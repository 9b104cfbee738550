#pragma once
// Encodes texts once: with a cache directory, the matrix is stored under a key made of the encoder's name and
// every text, and read back on the next run with the same inputs (a damaged cache file is recomputed).
#include <string>
#include <vector>

#include "relmem/encoders/encoder.hpp"

namespace relmem {

RowMatrix encode_cached(const Encoder& encoder, const std::vector<std::string>& texts, const std::string& cache_dir);

}  // namespace relmem
