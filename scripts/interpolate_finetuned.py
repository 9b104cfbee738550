"""A fine-tuned sentence encoder moved part of the way back to its pretrained weights: every tensor of model.safetensors
becomes pretrained + alpha * (fine-tuned - pretrained), so alpha 1 is the fine-tuned model and alpha 0 the
pretrained one (weight-space interpolation, WiSE-FT). The fine-tuned directory's other files, relevance_head.json
included, are copied as they are; OUT must not exist.

    .venv/bin/python scripts/interpolate_finetuned.py $RELMEM_HOME/models/minilm \\
        $RELMEM_HOME/models/minilm-card-cosine-syn 0.25 OUT
"""
import argparse
import json
import os
import shutil
import struct

import numpy as np


def read_safetensors(path):
    """(header, data bytes) of a safetensors file."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        return json.loads(f.read(size)), f.read()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pretrained", help="the pretrained model directory")
    parser.add_argument("finetuned", help="the fine-tuned model directory (same tensor names and shapes)")
    parser.add_argument("alpha", type=float, help="0: pretrained, 1: fine-tuned")
    parser.add_argument("out", help="new model directory")
    args = parser.parse_args()
    if os.path.exists(args.out):
        parser.error(f"{args.out} exists")
    pre_header, pre_data = read_safetensors(os.path.join(args.pretrained, "model.safetensors"))
    header, data = read_safetensors(os.path.join(args.finetuned, "model.safetensors"))
    mixed, changed = bytearray(data), 0
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] != "F32" or name not in pre_header or pre_header[name]["shape"] != meta["shape"]:
            raise SystemExit(f"{name}: not an F32 tensor of the pretrained model's shape")
        begin, end = meta["data_offsets"]
        pre_begin, pre_end = pre_header[name]["data_offsets"]
        tuned = np.frombuffer(data[begin:end], dtype="<f4")
        pretrained = np.frombuffer(pre_data[pre_begin:pre_end], dtype="<f4")
        if not np.array_equal(tuned, pretrained):
            changed += 1
            mixed[begin:end] = (pretrained + args.alpha * (tuned - pretrained)).astype("<f4").tobytes()
    shutil.copytree(args.finetuned, args.out)
    with open(os.path.join(args.out, "model.safetensors"), "r+b") as f:
        f.seek(8 + struct.unpack("<Q", f.read(8))[0])
        f.write(bytes(mixed))
    print(f"{changed} tensors at alpha {args.alpha} -> {args.out}")


if __name__ == "__main__":
    main()
