#!/usr/bin/env bash
# The reference Python of the tests (.venv-ref): torch's CPU build and sentence-transformers, against which the tests
# check relmem's MiniLM encoder and its hand-written backward passes. relmem never imports them. Every wheel is
# pinned by version and sha256 (scripts/reference/requirements.txt); torch's CPU wheel comes from the local wheel
# folder ($RELMEM_WHEELS, default /opt/wheels). Where it cannot be installed, this says so and the tests that need it
# skip: it never fails the build.
#
#   scripts/install_reference.sh [VENV_DIR]
set -uo pipefail

venv="${1:-.venv-ref}"
wheels="${RELMEM_WHEELS:-/opt/wheels}"
requirements="$(dirname "$0")/reference/requirements.txt"
python="$venv/bin/python"
if [ -x "$python" ] && "$python" - <<'PY' 2>/dev/null; then exit 0; fi
import importlib.metadata as m
raise SystemExit(m.version("torch") != "2.13.0+cpu" or m.version("sentence-transformers") != "6.2.0")
PY
echo "relmem: installing the tests' reference Python into $venv (torch 2.13.0+cpu, sentence-transformers 6.2.0)"
if [ ! -x "$python" ] && ! /usr/bin/python3 -m venv "$venv"; then
  echo "relmem: cannot create $venv; the reference tests will skip" >&2
  exit 0
fi
if ! "$python" -m pip install --quiet --quiet --require-hashes --no-deps --only-binary=:all: --find-links "$wheels" \
    -r "$requirements"; then
  echo "relmem: the reference packages did not install (torch's CPU wheel is looked for in $wheels); the reference" \
       "tests will skip" >&2
fi
exit 0
