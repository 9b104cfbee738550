"""scripts/interpolate_finetuned.py: pretrained + alpha * (fine-tuned - pretrained) per tensor, a new directory."""
import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "interpolate_finetuned.py"


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        data = np.asarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(np.shape(array)), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    raw = path.read_bytes()
    size = struct.unpack("<Q", raw[:8])[0]
    header, data = json.loads(raw[8:8 + size]), raw[8 + size:]
    return {name: np.frombuffer(data[m["data_offsets"][0]:m["data_offsets"][1]], dtype="<f4").reshape(m["shape"])
            for name, m in header.items()}


def model(folder, tensors, extra=None):
    folder.mkdir()
    write_safetensors(folder / "model.safetensors", tensors)
    for name, text in (extra or {}).items():
        (folder / name).write_text(text)
    return folder


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_changed_tensors_move_by_alpha_and_the_rest_is_copied(tmp_path):
    frozen = np.arange(6, dtype=np.float32).reshape(2, 3)
    pretrained = model(tmp_path / "pre", {"frozen": frozen, "top": [1.0, 2.0, 3.0]})
    finetuned = model(tmp_path / "ft", {"frozen": frozen, "top": [5.0, 2.0, -1.0]},
                      {"relevance_head.json": '{"scale": 10.0, "bias": -4.0}'})
    result = run(pretrained, finetuned, 0.25, tmp_path / "mixed")
    assert result.returncode == 0, result.stderr
    assert "1 tensors at alpha 0.25" in result.stdout
    mixed = read_safetensors(tmp_path / "mixed" / "model.safetensors")
    np.testing.assert_array_equal(mixed["frozen"], frozen)
    np.testing.assert_allclose(mixed["top"], [2.0, 2.0, 2.0])
    assert (tmp_path / "mixed" / "relevance_head.json").read_text() == '{"scale": 10.0, "bias": -4.0}'
    assert read_safetensors(finetuned / "model.safetensors")["top"].tolist() == [5.0, 2.0, -1.0]


def test_an_existing_output_or_a_mismatched_model_is_refused(tmp_path):
    pretrained = model(tmp_path / "pre", {"top": [1.0, 2.0]})
    finetuned = model(tmp_path / "ft", {"top": [3.0, 4.0]})
    existing = tmp_path / "out"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine")
    result = run(pretrained, finetuned, 0.5, existing)
    assert result.returncode != 0 and "exists" in result.stderr
    assert [p.name for p in existing.iterdir()] == ["keep.txt"]
    other = model(tmp_path / "other", {"top": [1.0, 2.0, 3.0]})
    result = run(pretrained, other, 0.5, tmp_path / "mixed")
    assert result.returncode != 0 and "shape" in result.stderr + result.stdout
    assert not (tmp_path / "mixed").exists()
