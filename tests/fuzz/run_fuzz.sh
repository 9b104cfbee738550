#!/usr/bin/env bash
# Builds the SQL parser and statement gate fuzzer with clang's libFuzzer + AddressSanitizer + UBSan and runs it.
#   tests/fuzz/run_fuzz.sh [SECONDS] [extra libFuzzer flags...]
#   FUZZ_TARGET=fuzz_statement_gate tests/fuzz/run_fuzz.sh ...   # the statement gate alone (much faster)
#   FUZZ_SANITIZERS=fuzzer,undefined tests/fuzz/run_fuzz.sh ...   # without AddressSanitizer: several times faster,
#                                                                 # catches crashes, aborts and UB but not silent
#                                                                 # out-of-bounds reads
# The seed corpus is every Spider gold query (when ../shared/data/spider exists) plus a few hand-written ones;
# output goes to $FUZZ_OUT (default build-fuzz), crashes to $FUZZ_OUT/crashes/. Exits non-zero on a crash.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN="${1:-60}"
shift || true
CXX="${CXX:-$(command -v clang++-14 || command -v clang++)}"
OUT="${FUZZ_OUT:-build-fuzz}"
mkdir -p "$OUT/corpus" "$OUT/crashes"

TARGET="${FUZZ_TARGET:-fuzz_sql_parser}"
SANITIZERS="${FUZZ_SANITIZERS:-fuzzer,address,undefined}"
sources=(cpp/src/sql/*.cpp cpp/src/catalog/schema.cpp cpp/src/catalog/statement_keyword.cpp cpp/src/common/utf8.cpp)
"$CXX" -std=c++17 -O2 -g -fsanitize="$SANITIZERS" -fno-sanitize-recover=undefined \
  -Icpp/include -I/usr/include/eigen3 "tests/fuzz/$TARGET.cpp" "${sources[@]}" -o "$OUT/$TARGET"

SPIDER=../shared/data/spider
if [ -d "$SPIDER" ] && [ -z "$(ls -A "$OUT/corpus")" ]; then
  /usr/bin/python3 - "$SPIDER" "$OUT/corpus" <<'PY'
import hashlib, json, pathlib, sys
spider, corpus = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
queries = set()
for name in ("dev.json", "train_spider.json"):
    path = spider / name
    if path.exists():
        queries.update(item["query"] for item in json.loads(path.read_text()))
for query in queries:
    (corpus / hashlib.sha1(query.encode()).hexdigest()).write_text(query)
print(f"seed corpus: {len(queries)} distinct Spider queries")
PY
fi
for seed in "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c LIMIT 5" \
            "SELECT CAST(a AS VARCHAR(10)), x COLLATE NOCASE, -(1), [a b], \`c\` FROM (t JOIN u USING (id))" \
            "SELECT a FROM t WHERE b NOT BETWEEN 1 AND 2 AND c IS NOT DISTINCT FROM d AND e NOTNULL"; do
  printf '%s' "$seed" > "$OUT/corpus/seed-$(printf '%s' "$seed" | sha1sum | cut -c1-12)"
done

"$OUT/$TARGET" "$OUT/corpus" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -timeout=10 \
  -dict=tests/fuzz/sql.dict -artifact_prefix="$OUT/crashes/" -print_final_stats=1 "$@"
