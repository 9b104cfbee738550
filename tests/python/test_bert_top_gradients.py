"""The card-cosine classifier's hand-written gradients (BERT layers, mean pooling, L2 normalization, the BCE head)
against torch autograd on small random inputs.

torch is not a dependency of relmem: the reference runs in another interpreter, $RELMEM_REFERENCE_PYTHON or the
repository's .venv-ref (`make reference`, which `make test` runs), through
scripts/reference/bert_layer_gradients_reference.py. The test skips when neither has torch.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from relmem import _relmem

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_SCRIPT = ROOT / "scripts" / "reference" / "bert_layer_gradients_reference.py"
MAX_RELATIVE_ERROR = 1e-4
WIDTH, HEADS, HIDDEN, EPSILON = 16, 4, 24, 1e-12


def reference_python():
    candidates = [os.environ.get("RELMEM_REFERENCE_PYTHON"), str(ROOT / ".venv-ref" / "bin" / "python"),
                  sys.executable]
    for python in filter(None, candidates):
        if Path(python).exists() and subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0:
            return python
    return None


def random_case(layers, seed):
    rng = np.random.default_rng(seed)
    flat = []
    for _ in range(layers):
        values = rng.normal(0.0, 0.3, layer_size()).astype(np.float32)
        for name, kind, offset, shape in _relmem.bert_layer_tensors(WIDTH, HIDDEN):
            if name.endswith("LayerNorm") and kind == "weight":
                values[offset:offset + int(np.prod(shape))] += 1.0
        flat.append(values)
    flat = np.concatenate(flat)
    offsets = [0, 3, 4, 9, 11, 17]
    tokens = rng.normal(0.0, 1.0, (offsets[-1], WIDTH)).astype(np.float32)
    pairs = [(0, 3, 1.0), (0, 4, 0.0), (1, 3, 0.0), (2, 4, 1.0), (1, 2, 0.0), (3, 4, 0.0)]
    return flat, to_hugging_face(flat, layers), tokens, offsets, pairs


def layer_size():
    return sum(int(np.prod(shape)) for _, _, _, shape in _relmem.bert_layer_tensors(WIDTH, HIDDEN))


def to_hugging_face(flat, layers):
    """Flat parameters (or their gradient) as per-layer Hugging Face tensors: Linear weights (out, in), and
    query, key and value apart."""
    layout = _relmem.bert_layer_tensors(WIDTH, HIDDEN)
    size = layer_size()
    out = []
    for layer in range(layers):
        values = flat[layer * size:(layer + 1) * size]
        tensors = {}
        for name, kind, offset, shape in layout:
            block = values[offset:offset + int(np.prod(shape))].reshape(shape)
            if name == "attention.self.qkv":
                for part, prefix in enumerate(["query", "key", "value"]):
                    piece = block[..., part * WIDTH:(part + 1) * WIDTH]
                    tensors[f"attention.self.{prefix}.{kind}"] = piece.T if kind == "weight" else piece
            else:
                tensors[f"{name}.{kind}"] = block.T if kind == "weight" else block
        out.append(tensors)
    return out


def relative_error(ours, reference):
    ours, reference = np.asarray(ours, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    return float(np.linalg.norm(ours - reference) / max(np.linalg.norm(reference), 1e-30))


@pytest.fixture(scope="module")
def python():
    found = reference_python()
    if found is None:
        pytest.skip("no Python with torch ($RELMEM_REFERENCE_PYTHON or .venv-ref)")
    return found


@pytest.mark.parametrize("layers", [1, 2])
def test_every_tensor_gradient_matches_torch(python, tmp_path, layers):
    flat, hugging_face, tokens, offsets, pairs = random_case(layers, seed=layers)
    scale, bias = 6.0, -1.5
    ours = _relmem.card_relevance_gradients(WIDTH, HEADS, HIDDEN, layers, EPSILON, flat, tokens, offsets, pairs,
                                            scale, bias)
    case = {"heads": HEADS, "norm_epsilon": EPSILON, "offsets": offsets, "pairs": pairs, "scale": scale,
            "bias": bias, "tokens": tokens.tolist(),
            "layers": [{name: value.tolist() for name, value in layer.items()} for layer in hugging_face]}
    (tmp_path / "case.json").write_text(json.dumps(case))
    subprocess.run([python, str(REFERENCE_SCRIPT), str(tmp_path / "case.json"), str(tmp_path / "out.json")],
                   check=True, capture_output=True)
    reference = json.loads((tmp_path / "out.json").read_text())

    assert abs(ours["loss"] - reference["loss"]) <= 1e-5 * abs(reference["loss"])
    errors = {"scale": relative_error(ours["scale"], reference["scale"]),
              "bias": relative_error(ours["bias"], reference["bias"])}
    for layer, (mine, theirs) in enumerate(zip(to_hugging_face(ours["parameters"], layers), reference["layers"])):
        assert set(mine) == set(theirs)
        largest = max(np.linalg.norm(value) for value in theirs.values())
        for name in theirs:
            if name == "attention.self.key.bias":
                # The softmax does not see a bias added to every key, so its gradient is zero up to rounding.
                assert np.linalg.norm(mine[name]) <= 1e-6 * largest
                assert np.linalg.norm(theirs[name]) <= 1e-12 * largest
                continue
            assert np.linalg.norm(theirs[name]) > 1e-3 * largest, name
            errors[f"layer {layer} {name}"] = relative_error(mine[name], theirs[name])
    assert len(errors) == 2 + 15 * layers
    worst = max(errors, key=errors.get)
    assert errors[worst] <= MAX_RELATIVE_ERROR, (worst, errors[worst])
