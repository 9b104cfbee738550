// The scan's register tiles, written once for any vector width. Each instruction set's file defines
// RELMEM_SCAN_TARGET (its target attribute) and a Simd traits type, then includes this header: every function here
// carries that attribute, so that the traits' intrinsics inline into it, and lives in that file's anonymous
// namespace. A Simd type provides
//   Vec, kLanes                           the vector type and its number of floats;
//   zero(), load(p), add(a, b),
//   fmadd(a, b, acc)                      fp32 vector operations;
//   load_row<kType>(row, j)               kLanes values of a stored row from index j, widened to fp32;
//   sum(v), fold(v)                       the sum of the lanes, and v's lanes added pairwise into one __m256;
//   kMidRows x kMidQueries                the tile for fp32 rows against 9 to 16 queries;
//   kTileRows x kTileQueries              the tile for compact rows, and for fp32 rows against more queries.
// Nothing here includes headers or opens a namespace: the including file does both.

// Value j of a row as fp32.
template <RowType kType>
RELMEM_SCAN_TARGET inline float value_at(const uint8_t* row, int j) {
  if constexpr (kType == RowType::FP32) {
    return reinterpret_cast<const float*>(row)[j];
  } else if constexpr (kType == RowType::FP16) {
    return _cvtsh_ss(reinterpret_cast<const uint16_t*>(row)[j]);
  } else {
    return static_cast<float>(reinterpret_cast<const int8_t*>(row)[j]);
  }
}

// The lane sums of a, b, c and d, in that order: one transposing reduction for four accumulators instead of four.
template <typename Simd>
RELMEM_SCAN_TARGET inline __m128 sum4(typename Simd::Vec a, typename Simd::Vec b, typename Simd::Vec c,
                                      typename Simd::Vec d) {
  const __m256 ab = _mm256_hadd_ps(Simd::fold(a), Simd::fold(b));  // per 128-bit half: a01 a23 b01 b23
  const __m256 cd = _mm256_hadd_ps(Simd::fold(c), Simd::fold(d));
  const __m256 abcd = _mm256_hadd_ps(ab, cd);  // per half: a b c d
  return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

// kRows rows against kQueries queries (a register tile of kRows x kQueries accumulators): every kLanes values of a
// row are loaded and widened once for all the queries, every kLanes values of a query once for all the rows, and
// the accumulators are independent chains, so that neither the loads nor the FMA latency bound the pace. Each row
// is read front to back. out[r * out_stride + q] = <row r, query q> (times the row's scale for int8 rows).
template <typename Simd, RowType kType, int kRows, int kQueries>
RELMEM_SCAN_TARGET void tile(const uint8_t* const* row_codes, const float* scales, int dim, const float* queries,
                             float* out, int64_t out_stride, int64_t ahead) {
  using Vec = typename Simd::Vec;
  constexpr int kLanes = Simd::kLanes;
  constexpr int kValueBytes = kType == RowType::FP32 ? 4 : kType == RowType::FP16 ? 2 : 1;
  Vec acc[kRows][kQueries];
  for (int r = 0; r < kRows; ++r)
    for (int q = 0; q < kQueries; ++q) acc[r][q] = Simd::zero();
  // The accumulators are named in this loop only (no lambda or helper taking them by reference): GCC then keeps
  // them in registers instead of storing them to the stack at every step, which made the store port the bound.
  int j = 0;
  for (; j + kLanes <= dim; j += kLanes) {
    Vec values[kRows];
    for (int r = 0; r < kRows; ++r) {
      if (ahead > 0 && (j * kValueBytes) % 64 == 0)
        _mm_prefetch(reinterpret_cast<const char*>(row_codes[r] + ahead + j * kValueBytes), _MM_HINT_T0);
      values[r] = Simd::template load_row<kType>(row_codes[r], j);
    }
    for (int q = 0; q < kQueries; ++q) {
      Vec query = Simd::load(queries + static_cast<int64_t>(q) * dim + j);
      // Loaded once into a register for all the tile's rows: left alone, GCC folds the load into every row's FMA,
      // and the loads, not the FMAs, then bound the pace.
      __asm__("" : "+v"(query));
      for (int r = 0; r < kRows; ++r) acc[r][q] = Simd::fmadd(values[r], query, acc[r][q]);
    }
  }
  float tail[kRows][kQueries] = {};  // the last dim % kLanes values, one at a time
  for (; j < dim; ++j)
    for (int r = 0; r < kRows; ++r)
      for (int q = 0; q < kQueries; ++q)
        tail[r][q] += value_at<kType>(row_codes[r], j) * queries[static_cast<int64_t>(q) * dim + j];
  for (int r = 0; r < kRows; ++r) {
    const float scale = kType == RowType::INT8 ? scales[r] : 1.0f;
    float* row_out = out + r * out_stride;
    int q = 0;
    if constexpr (kQueries % 4 == 0) {
      for (; q < kQueries; q += 4) {
        const __m128 sums = sum4<Simd>(acc[r][q], acc[r][q + 1], acc[r][q + 2], acc[r][q + 3]);
        const __m128 tails = _mm_loadu_ps(&tail[r][q]);
        _mm_storeu_ps(row_out + q, _mm_mul_ps(_mm_add_ps(sums, tails), _mm_set1_ps(scale)));
      }
    }
    for (; q < kQueries; ++q) row_out[q] = (Simd::sum(acc[r][q]) + tail[r][q]) * scale;
  }
}

// One row against one query: the sums are split over four accumulators, so that the FMA latency does not bound
// the pace at which the row streams in (a single stream, which the hardware prefetcher follows best).
template <typename Simd, RowType kType>
RELMEM_SCAN_TARGET float row_against_query(const uint8_t* row, float scale, int dim, const float* query) {
  using Vec = typename Simd::Vec;
  constexpr int kLanes = Simd::kLanes;
  constexpr int kSplit = 4;
  Vec acc[kSplit];
  for (int s = 0; s < kSplit; ++s) acc[s] = Simd::zero();
  int j = 0;
  for (; j + kLanes * kSplit <= dim; j += kLanes * kSplit)
    for (int s = 0; s < kSplit; ++s)
      acc[s] = Simd::fmadd(Simd::template load_row<kType>(row, j + kLanes * s), Simd::load(query + j + kLanes * s),
                           acc[s]);
  for (; j + kLanes <= dim; j += kLanes)
    acc[0] = Simd::fmadd(Simd::template load_row<kType>(row, j), Simd::load(query + j), acc[0]);
  float tail = 0.0f;
  for (; j < dim; ++j) tail += value_at<kType>(row, j) * query[j];
  const float sum = Simd::sum(Simd::add(Simd::add(acc[0], acc[1]), Simd::add(acc[2], acc[3]))) + tail;
  return sum * (kType == RowType::INT8 ? scale : 1.0f);
}

// kRows rows against every query: the queries kGroup at a time, then the last ones four, three, two or one at a
// time. The first tile reads the rows from memory and prefetches `ahead` bytes further; the others find them in L1.
template <typename Simd, RowType kType, int kRows, int kGroup>
RELMEM_SCAN_TARGET void rows_against_queries(const uint8_t* const* row_codes, const float* scales, int dim,
                                             const float* queries, int n_queries, float* out, int64_t ahead) {
  int q = 0;
  const auto next = [&](auto tile_fn, int width) {
    tile_fn(row_codes, scales, dim, queries + static_cast<int64_t>(q) * dim, out + q, n_queries, ahead);
    q += width;
    ahead = 0;
  };
  while (q + kGroup <= n_queries) next(tile<Simd, kType, kRows, kGroup>, kGroup);
  if (kGroup > 4 && q + 4 <= n_queries) next(tile<Simd, kType, kRows, 4>, 4);
  switch (n_queries - q) {
    case 3: return next(tile<Simd, kType, kRows, 3>, 3);
    case 2: return next(tile<Simd, kType, kRows, 2>, 2);
    case 1: return next(tile<Simd, kType, kRows, 1>, 1);
    default: return;
  }
}

// Rows row_number(0 .. count - 1) against every query, kRows rows at a time.
template <typename Simd, RowType kType, int kRows, int kGroup, typename RowNumber, typename ScaleOf>
RELMEM_SCAN_TARGET void score_tiles(const RowsView& rows, bool consecutive, const RowNumber& row_number,
                                    const ScaleOf& scale_of, int64_t count, const float* queries, int n_queries,
                                    float* out) {
  const size_t row_bytes = rows.row_bytes();
  // Consecutive rows are fetched kAheadTiles tiles ahead: the hardware prefetcher alone loses track of several
  // interleaved row streams, and one row at a time against 8 queries takes long enough per row that 2 rows ahead
  // came too late (8 queries, 100,000 x 512, quiet 2-core host: 73% of sgemv's bandwidth 2 rows ahead, about 90%
  // 8 rows ahead). Listed rows lie anywhere.
  constexpr int64_t kAheadTiles = kRows == 1 ? 8 : 2;
  const int64_t ahead = consecutive ? kAheadTiles * kRows * static_cast<int64_t>(row_bytes) : 0;
  const uint8_t* row_codes[kRows];
  float scales[kRows];
  int64_t i = 0;
  for (; i + kRows <= count; i += kRows) {
    for (int r = 0; r < kRows; ++r) {
      const int64_t row = row_number(i + r);
      row_codes[r] = rows.codes + static_cast<size_t>(row) * row_bytes;
      scales[r] = scale_of(row);
    }
    rows_against_queries<Simd, kType, kRows, kGroup>(row_codes, scales, rows.dim, queries, n_queries,
                                                     out + i * n_queries, ahead);
  }
  for (; i < count; ++i) {
    const int64_t row = row_number(i);
    row_codes[0] = rows.codes + static_cast<size_t>(row) * row_bytes;
    scales[0] = scale_of(row);
    rows_against_queries<Simd, kType, 1, kGroup>(row_codes, scales, rows.dim, queries, n_queries,
                                                 out + i * n_queries, 0);
  }
}

// Rows begin, begin + 1, ... when `listed` is null, else listed[0], listed[1], ...: one query row by row, more
// queries in register tiles.
template <typename Simd, RowType kType>
RELMEM_SCAN_TARGET void score_typed(const RowsView& rows, int64_t begin, const int64_t* listed, int64_t count,
                                    const float* queries, int n_queries, float* out) {
  const size_t row_bytes = rows.row_bytes();
  const auto row_number = [&](int64_t i) { return listed ? listed[i] : begin + i; };
  const auto scale_of = [&](int64_t row) { return kType == RowType::INT8 ? rows.scales[row] : 1.0f; };
  if (n_queries == 1) {
    // Listed rows lie anywhere (a pool of candidates in a mapped file): the hardware prefetcher cannot guess the
    // next one, so it is fetched kListedAhead rows ahead. Consecutive rows are fetched kConsecutiveAhead rows ahead
    // too: with both cores streaming, the hardware prefetcher alone kept one query's scan at about 70% of sgemv's
    // bandwidth, the software prefetch at about 90% (one query, 100,000 x 512, quiet 2-core AMD host).
    constexpr int64_t kListedAhead = 2;
    constexpr int64_t kConsecutiveAhead = 16;
    for (int64_t i = 0; i < count; ++i) {
      const uint8_t* next = nullptr;
      if (listed && i + kListedAhead < count) {
        next = rows.codes + static_cast<size_t>(listed[i + kListedAhead]) * row_bytes;
      } else if (!listed && i + kConsecutiveAhead < count) {
        next = rows.codes + static_cast<size_t>(begin + i + kConsecutiveAhead) * row_bytes;
      }
      if (next)
        for (size_t line = 0; line < row_bytes; line += 64)
          _mm_prefetch(reinterpret_cast<const char*>(next + line), _MM_HINT_T0);
      const int64_t row = row_number(i);
      out[i] = row_against_query<Simd, kType>(rows.codes + static_cast<size_t>(row) * row_bytes, scale_of(row),
                                              rows.dim, queries);
    }
    return;
  }
  // fp32 rows up to 8 queries one row at a time (a single memory stream: they are memory-bound), up to 16 queries
  // in the mid tile, above that in the compact rows' tile, which loads the least per FMA once compute is the bound;
  // compact rows, which stream 2-4x fewer bytes, in their tile throughout.
  const bool consecutive = !listed;
  if (kType == RowType::FP32 && n_queries <= 8)
    return score_tiles<Simd, kType, 1, 8>(rows, consecutive, row_number, scale_of, count, queries, n_queries, out);
  if (kType == RowType::FP32 && n_queries <= 16)
    return score_tiles<Simd, kType, Simd::kMidRows, Simd::kMidQueries>(rows, consecutive, row_number, scale_of,
                                                                       count, queries, n_queries, out);
  score_tiles<Simd, kType, Simd::kTileRows, Simd::kTileQueries>(rows, consecutive, row_number, scale_of, count,
                                                                queries, n_queries, out);
}

template <typename Simd>
RELMEM_SCAN_TARGET void score_any(const RowsView& rows, int64_t begin, const int64_t* listed, int64_t count,
                                  const float* queries, int n_queries, float* out) {
  switch (rows.type) {
    case RowType::FP32: return score_typed<Simd, RowType::FP32>(rows, begin, listed, count, queries, n_queries, out);
    case RowType::FP16: return score_typed<Simd, RowType::FP16>(rows, begin, listed, count, queries, n_queries, out);
    case RowType::INT8: return score_typed<Simd, RowType::INT8>(rows, begin, listed, count, queries, n_queries, out);
  }
}
