#!/usr/bin/env bash
# Installs BlendSQL (SWAN's baseline) into its own environment, $RELMEM_HOME/blendsql-venv, for
# `relmem bench swan --mode blendsql`. Optional: relmem never imports BlendSQL, and the mode is skipped without it.
# Every package is pinned by version and sha256 (scripts/blendsql-requirements.txt); llama-cpp-python is the wheel
# `make llm` built from its pinned source, so BlendSQL runs the same llama.cpp and the same GGUF model as relmem.
#
#   scripts/install_blendsql.sh          creates the environment (once; a finished one is left as it is)
set -euo pipefail

RELMEM_HOME="${RELMEM_HOME:-$HOME/.cache/relmem}"
VENV="$RELMEM_HOME/blendsql-venv"
REQUIREMENTS="$(cd "$(dirname "$0")" && pwd)/blendsql-requirements.txt"

if [ -f "$VENV/.installed" ]; then
  echo "relmem: BlendSQL is installed in $VENV"
  exit 0
fi
if [ -e "$VENV" ]; then
  echo "relmem: $VENV exists but holds no finished install; move it away and run this again" >&2
  exit 1
fi
wheel="$(ls "$RELMEM_HOME"/wheels/llama_cpp_python-0.3.36-*.whl 2>/dev/null | head -n 1 || true)"
if [ -z "$wheel" ]; then
  echo "relmem: no llama-cpp-python wheel in $RELMEM_HOME/wheels: run \`make llm\` first" >&2
  exit 1
fi
trap 'rm -rf "$VENV"' EXIT  # a failed install leaves nothing half-made
/usr/bin/python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --no-deps --require-hashes -r "$REQUIREMENTS"
"$VENV/bin/python" -m pip install --quiet --no-deps "$wheel"
LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/python" -c "import blendsql.models, llama_cpp" 2>/dev/null \
  || { echo "relmem: BlendSQL does not import in $VENV" >&2; exit 1; }
touch "$VENV/.installed"
trap - EXIT
echo "relmem: BlendSQL 0.0.63 installed in $VENV"
