#!/usr/bin/env bash
# Installs the drivers of the server engines into the venv: psycopg 3 (PostgreSQL, over the system's libpq),
# PyMySQL (MySQL, MariaDB) and sqlglot (the static SQL gate). Every wheel is pinned by version and sha256; nothing
# is downloaded at run time.
#
#   scripts/install_engines.sh VENV_PYTHON
set -euo pipefail

PACKAGES=(
  "psycopg==3.3.9 --hash=sha256:d2d7d04a1ce6dab4f5b27316bea3b52585cafa2f2d631e5b09dd69823f5c26f6"
  "pymysql==1.2.4 --hash=sha256:e169bed906168fffd0088925f45b3df024c2775c6fd128da0df773d47c458840"
  "sqlglot==30.30.0 --hash=sha256:06c4c212a7868c7dcff0fd0fda348dd3c5cbad40137b3083a70ecdfe22921cf9"
  # psycopg needs typing-extensions >= 4.6; Debian 12 ships 4.4.
  "typing-extensions==4.12.2 --hash=sha256:04e5ca0351e0f3f85c6853954072df659d0d13fac324d0072316b67d7794700d"
)

[ $# -eq 1 ] || { echo "usage: $0 VENV_PYTHON" >&2; exit 2; }
python="$1"
"$python" - <<'PY' 2>/dev/null && exit 0
import importlib.metadata as m
wanted = {"psycopg": "3.3.9", "pymysql": "1.2.4", "sqlglot": "30.30.0", "typing-extensions": "4.12.2"}
raise SystemExit(any(m.version(name) != version for name, version in wanted.items()))
PY
echo "relmem: installing the server engine drivers (psycopg, PyMySQL, sqlglot)"
requirements="$(mktemp)"
trap 'rm -f "$requirements"' EXIT
printf '%s\n' "${PACKAGES[@]}" | grep -v '^ *#' > "$requirements"
"$python" -m pip install --quiet --require-hashes --no-deps --only-binary=:all: -r "$requirements"
