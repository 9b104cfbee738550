#!/usr/bin/env bash
# Builds relmem with its CUDA kernels on a machine with a GPU, runs the GPU tests and the GPU benchmarks, and writes
# every log and JSON into OUTDIR. Steps (comma separated, default all): kernelbench (kernel-level times and memory
# ceilings, kernels/bench_kernels.cu; needs nvcc alone), build, tests, similarity, kernels (per-kernel times under
# Nsight Compute), training, selection.
#
#   scripts/gpu_checks.sh OUTDIR [STEPS]
#
# Environment: DEPS_PREFIX, a prefix holding Eigen, nlohmann_json, GoogleTest and SQLite where the system lacks them;
# SPIDER, the Spider folder (default ../shared/data/spider); BUILD (default build-gpu); PYTHON (default python3);
# KERNEL_BENCH, a bench_kernels already built for this machine (else kernelbench builds one with nvcc);
# CPU_MAX_QUERIES, the largest batch the similarity benchmark also times on the CPU index (default 1024).
set -uo pipefail

OUT=${1:?usage: scripts/gpu_checks.sh OUTDIR [STEPS]}
STEPS=${2:-kernelbench,build,tests,similarity,kernels,training,selection}
BUILD=${BUILD:-build-gpu}
PYTHON=${PYTHON:-python3}
SPIDER=${SPIDER:-../shared/data/spider}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1

has_step() { [[ ",$STEPS," == *",$1,"* ]]; }
stamp() { echo "[$(date +%T)] $*"; }
relmem_cli() { "$PYTHON" -m relmem.cli "$@"; }

if has_step kernelbench; then
  stamp "kernel benchmark"
  bench=${KERNEL_BENCH:-}
  if [[ -z "$bench" ]] || ! "$bench" 1000 64 1 10 1 > /dev/null 2>&1; then
    bench="$BUILD/bench_kernels"
    mkdir -p "$BUILD/bench-objects"
    eigen=${DEPS_PREFIX:+$DEPS_PREFIX/include/eigen3}
    flags=(-O3 -std=c++17 -arch=sm_90 -Ikernels -Icpp/include -I"${eigen:-/usr/include/eigen3}")
    for f in kernels/bench_kernels.cu kernels/topk_fused.cu kernels/topk_select.cu kernels/topk_stream.cu \
             kernels/normalize_convert.cu cpp/src/index/gpu/reference_kernels.cpp cpp/src/device/precision.cpp; do
      nvcc "${flags[@]}" -c "$f" -o "$BUILD/bench-objects/$(basename "$f").o" &
    done
    wait
    nvcc -arch=sm_90 "$BUILD"/bench-objects/*.o -o "$bench" > "$OUT/bench_kernels_build.log" 2>&1 ||
      { tail -20 "$OUT/bench_kernels_build.log"; exit 1; }
  fi
  "$bench" 1000000 512 1,8,64 10 20 2>&1 | tee "$OUT/kernel_bench.txt"
fi

if has_step build; then
  stamp "configure"
  cmake_args=(-S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRELMEM_WITH_HTTP=OFF
              -DPython_EXECUTABLE="$(command -v "$PYTHON")"
              -Dpybind11_DIR="$("$PYTHON" -m pybind11 --cmakedir)")
  if [[ -n "${DEPS_PREFIX:-}" ]]; then
    lib=$(ls -d "$DEPS_PREFIX"/lib/*-linux-gnu | head -1)
    cmake_args+=(-DCMAKE_PREFIX_PATH="$DEPS_PREFIX" -DSQLite3_INCLUDE_DIR="$DEPS_PREFIX/include"
                 -DSQLite3_LIBRARY="$lib/libsqlite3.so")
  fi
  cmake "${cmake_args[@]}" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
  grep -E "CUDA kernels" "$OUT/configure.log"
  stamp "build"
  targets=(_relmem test_gpu_reference test_gpu_vector_index test_gpu_gemm test_selection_gpu)
  has_step training && targets+=(relmem-train-relevance)
  cmake --build "$BUILD" -j "$(nproc)" --target "${targets[@]}" > "$OUT/build.log" 2>&1 ||
    { tail -40 "$OUT/build.log"; exit 1; }
  stamp "built"
fi

if has_step tests; then
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv | tee "$OUT/device.txt"
  for t in test_gpu_reference test_gpu_vector_index test_gpu_gemm test_selection_gpu; do
    "$BUILD/tests/cpp/$t" --gtest_output="json:$OUT/$t.json" > "$OUT/$t.log" 2>&1
    echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$OUT/$t.log" | tr '\n' ' ')"
  done
  PYTHONPATH="$PYTHONPATH" "$PYTHON" -m pytest -q tests/python/test_gpu_similarity.py \
    tests/python/test_bench_selection.py -k "gpu or device" > "$OUT/pytest_gpu.log" 2>&1
  echo "pytest gpu: exit $? $(tail -1 "$OUT/pytest_gpu.log")"
fi

if has_step similarity; then
  # Small batches against every path (the GEMM + sort baseline included); large ones on the GEMM paths only (the
  # sort baseline would sort 8 billion scores per batch).
  stamp "similarity benchmark"
  cpu_max=(--cpu-max-queries "${CPU_MAX_QUERIES:-1024}")
  relmem_cli bench similarity --n 1000000 --dim 512 --queries 1,8,64 --k 10 --device cuda --dtype fp16 \
    --algorithms fused,gemm_select,gemm_sort,auto --repeats 20 "${cpu_max[@]}" --json > "$OUT/similarity_small.json" \
    2> "$OUT/similarity_small.err" || tail -5 "$OUT/similarity_small.err"
  relmem_cli bench similarity --n 1000000 --dim 512 --queries 1024,8192 --k 10 --device cuda --dtype fp16 \
    --algorithms gemm_select,auto --repeats 10 "${cpu_max[@]}" --json > "$OUT/similarity_large.json" \
    2> "$OUT/similarity_large.err" || tail -5 "$OUT/similarity_large.err"
  "$PYTHON" scripts/similarity_table.py "$OUT"/similarity_small.json "$OUT"/similarity_large.json
fi

if has_step kernels; then
  stamp "per-kernel times"
  ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum --csv \
    "$PYTHON" scripts/gpu_kernel_times.py > "$OUT/kernel_times.csv" 2> "$OUT/kernel_times.err" || tail -5 "$OUT/kernel_times.err"
  "$PYTHON" scripts/gpu_kernel_times.py --summarize "$OUT/kernel_times.csv" | tee "$OUT/kernel_times.txt"
fi

if has_step training; then
  stamp "training: CPU and CUDA trainers, same seed"
  for device in cpu cuda; do
    "$BUILD/training/relmem-train-relevance" --data "$SPIDER/train_spider.json" --dbs "$SPIDER/database" \
      --out "$OUT/relevance-$device.model" --epochs 4 --seed 0 --device "$device" --cache "$BUILD/train-cache" \
      > "$OUT/train_$device.log" 2>&1
    echo "train $device: exit $?"; grep -i -E "epoch" "$OUT/train_$device.log" | head -8
  done
fi

if has_step selection; then
  for n in ${SELECTION_SIZES:-100000}; do
    stamp "selection memory at $n databases on the GPU"
    relmem_cli bench selection --dbs "$SPIDER/database" --questions "$SPIDER/dev.json" --synthetic "$n" \
      --device cuda --batch 256 --json > "$OUT/selection_$n.json" 2> "$OUT/selection_$n.err" || tail -5 "$OUT/selection_$n.err"
  done
fi
stamp "done"
