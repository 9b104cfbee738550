#!/usr/bin/env bash
# The paper's experiments with a real LLM (docs/llm.md): each condition on the first N items of each kind of a
# fixed set. Every run resumes its output, so a larger N later adds items without repeating any.
#
#   scripts/llm_experiments.sh SET.jsonl MEMDIR OUTDIR N [LLM flags of `relmem eval run`]
#
# SET: `relmem eval build ... --n single=100,double=50,value=50,zero=50 --value-cases CASES --seed 0`.
# MEMDIR: `relmem index --dbs ../shared/data/spider/database --encoder use-lite --examples TRAIN_EXAMPLES --out MEMDIR`.
# MINILM_MEMDIR (optional): the same on the default encoder, MiniLM (`--encoder minilm`), for the relmem-minilm runs.
# Runs, most telling first: relmem (with all top 5 and with the selected set only), gold-DB DDL (free to answer "No
# relevant database", and bound to its databases) and free decoding on single-DB questions; relmem with the kept
# selected set and the context switch seeing the candidates, or decided by the selection gate, on zero-, single- and
# double-DB questions; relmem and LLM only on zero-DB questions; value questions with and without the value memory;
# double-DB questions; top-20 DDL.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 SET.jsonl MEMDIR OUTDIR N [LLM flags]" >&2; exit 2; }
set_path="$1" memory="$2" out="$3" n="$4"
shift 4
relmem="${RELMEM:-.venv/bin/relmem}"
dbs="${SPIDER_DBS:-../shared/data/spider/database}"
mkdir -p "$out"

run() {  # run NAME KIND [flags]: items of KIND into OUTDIR/NAME.jsonl
  local name="$1" kind="$2"
  shift 2
  local file="$out/$name.jsonl" resume=()
  [ -s "$file" ] && resume=(--resume "$file")
  "$relmem" eval run --set "$set_path" --dbs "$dbs" --memory "$memory" --kind "$kind" --per-kind "$n" \
    --label "$name" --out "$file" "${resume[@]}" "$@" "${llm_flags[@]}"
}

llm_flags=("$@")
run relmem single
run relmem-selected single --candidates selected
run relmem-kept single --candidates selected --keep-candidates
kept=(--candidates selected --keep-candidates)
gate=("${kept[@]}" --context-switch selection)
for kind in zero single double; do
  run relmem-kept-switch "$kind" "${kept[@]}" --switch-view candidates
  run relmem-kept-gate "$kind" "${gate[@]}"
done
run relmem-kept-gate value "${gate[@]}"
for kind in single value double; do  # the same with the static repairs and the inspector's findings in self-correction
  run relmem-kept-gate-repairs "$kind" "${gate[@]}"
done
run relmem-kept-gate-parts double "${gate[@]}" --plan-parts  # a composite's parts planned one call each
run relmem-kept-gate-no-examples single "${gate[@]}" --disable examples
if [ -n "${MINILM_MEMDIR:-}" ]; then  # the settings of SELECTION_LED on a MiniLM memory
  for kind in single double value zero; do
    memory="$MINILM_MEMDIR" run relmem-minilm "$kind" "${gate[@]}" --plan-parts
  done
fi
run relmem-kept-gate-repairs-no-values value "${gate[@]}" --disable value_memory
run relmem-kept-gate-no-values value "${gate[@]}" --disable value_memory
run relmem-kept-gate-free single "${gate[@]}" --free
run gold-ddl single --condition gold-ddl
run gold-ddl-kept single --condition gold-ddl --keep-candidates  # bound to its databases, as relmem-kept-* are
run free-decoding single --free
run relmem zero
run llm-only zero --condition llm-only
run relmem value
run no-value-memory value --disable value_memory
run relmem double
run gold-ddl double --condition gold-ddl
run gold-ddl-kept double --condition gold-ddl --keep-candidates
run gold-ddl-kept-parts double --condition gold-ddl --keep-candidates --plan-parts
run top20-ddl single --condition top20-ddl
runs=()
for name in relmem-minilm relmem-kept-gate-repairs relmem-kept-gate-parts relmem-kept-gate-no-examples relmem-kept-gate-repairs-no-values relmem relmem-selected relmem-kept relmem-kept-switch relmem-kept-gate \
            relmem-kept-gate-no-values relmem-kept-gate-free gold-ddl gold-ddl-kept gold-ddl-kept-parts free-decoding llm-only no-value-memory top20-ddl; do
  [ -s "$out/$name.jsonl" ] && runs+=("$out/$name.jsonl")
done
"$relmem" eval report "${runs[@]}" > "$out/report.json"
"$relmem" eval report "${runs[@]}" --markdown > "$out/report.md"
