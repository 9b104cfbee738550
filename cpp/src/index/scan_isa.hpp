#pragma once
// The scan compiled for one instruction set each (scan_kernels_<isa>.cpp); scan_kernels.cpp picks one at run time.
// Rows begin, begin + 1, ... when `listed` is null, else listed[0], listed[1], ...; out as in scan::score_rows.
#include <cstdint>

#include "relmem/index/row_store.hpp"

namespace relmem::scan {

void score_avx512(const RowsView& rows, int64_t begin, const int64_t* listed, int64_t count, const float* queries,
                  int n_queries, float* out);
void score_avx2(const RowsView& rows, int64_t begin, const int64_t* listed, int64_t count, const float* queries,
                int n_queries, float* out);

}  // namespace relmem::scan
