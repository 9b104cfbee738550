#!/usr/bin/python3
"""Writes a BERT model directory with random weights in a real model's layout, for speed benchmarks of the BERT
encoder (speed does not depend on the weight values; the embeddings are of course meaningless):

    /usr/bin/python3 scripts/random_bert_model.py /tmp/minilm-random
    relmem bench encoder --encoder bert:/tmp/minilm-random --json

The layout (config, vocab and safetensors header; no weights) defaults to ../shared/models/minilm-layout.
"""
import argparse
import json
import pathlib
import shutil
import struct

import numpy as np

DEFAULT_LAYOUT = pathlib.Path(__file__).resolve().parents[2] / "shared" / "models" / "minilm-layout"
CONFIG_FILES = ["config.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output_dir")
    parser.add_argument("--layout", default=str(DEFAULT_LAYOUT), help="folder with safetensors_header.json and configs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    layout, out = pathlib.Path(args.layout), pathlib.Path(args.output_dir)
    header = json.loads((layout / "safetensors_header.json").read_text())
    out.mkdir(parents=True, exist_ok=True)
    for name in CONFIG_FILES:
        shutil.copyfile(layout / name, out / name)

    rng = np.random.default_rng(args.seed)
    entries = {"__metadata__": header.get("__metadata__", {})}
    ordered = sorted((info["data_offsets"][0], name) for name, info in header.items() if name != "__metadata__")
    chunks, offset = [], 0
    for _, name in ordered:
        info = header[name]
        shape = info["shape"]
        if info["dtype"] == "I64":
            data = np.arange(int(np.prod(shape)), dtype="<i8")
        elif name.endswith("LayerNorm.weight"):
            data = np.ones(shape, dtype="<f4")
        else:
            data = (0.05 * rng.standard_normal(shape, dtype=np.float32)).astype("<f4")
        raw = data.tobytes()
        entries[name] = {"dtype": "I64" if info["dtype"] == "I64" else "F32", "shape": shape,
                         "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    header_bytes = json.dumps(entries).encode()
    header_bytes += b" " * (-len(header_bytes) % 8)
    with open(out / "model.safetensors", "xb") as f:
        f.write(struct.pack("<Q", len(header_bytes)) + header_bytes)
        for raw in chunks:
            f.write(raw)
    print(f"wrote {out} ({offset / 2**20:.1f} MiB of F32 weights)")


if __name__ == "__main__":
    main()
