#pragma once
// Scores of stored rows against a small batch of queries, reading each row from memory once for all the queries:
// register tiles of rows x queries (shaped by row type, batch size and vector width) multiply every loaded
// row value with every query of the tile, widened from fp16 or int8 to fp32 in registers and accumulated in fp32;
// one query streams one row at a time. Compiled for AVX-512 and for AVX2 (target attributes), picked at run time.
#include <cstdint>

#include "relmem/index/row_store.hpp"

namespace relmem::scan {

// True when this CPU runs one of the scans: the widest that gemm::best_kernel() allows (RELMEM_GEMM_KERNEL=avx2
// forces the AVX2 scan, =portable none).
bool available();

// out[i * n_queries + q] = <row begin + i, query q> for i < count (int8 rows: times the row's scale). queries holds
// n_queries rows of rows.dim floats.
void score_rows(const RowsView& rows, int64_t begin, int64_t count, const float* queries, int n_queries, float* out);
// out[i * n_queries + q] = <row row_numbers[i], query q> for i < count.
void score_listed_rows(const RowsView& rows, const int64_t* row_numbers, int64_t count, const float* queries,
                       int n_queries, float* out);

}  // namespace relmem::scan
