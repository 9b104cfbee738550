"""The "minilm" encoder against sentence-transformers on torch's CPU build, on the installed all-MiniLM-L6-v2.

torch is not a dependency of relmem: the reference runs in another interpreter, $RELMEM_REFERENCE_PYTHON or the
repository's .venv-ref (`make reference`, which `make test` runs), through scripts/reference/
sentence_encoder_reference.py. The test skips when that interpreter or the installed model is absent.
"""
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relmem
from relmem import _relmem
from relmem.encoders import installed_model_dir

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_SCRIPT = ROOT / "scripts" / "reference" / "sentence_encoder_reference.py"
MIN_COSINE = 0.99999

UNICODE_TEXTS = [
    "", " ", "\t\n", "?", "[SEP]", "[CLS] [MASK] [UNK] [PAD]", "hello[SEP]world", "[cls] lower-case specials",
    "Ça coûte 100 € à Zürich!", "Héllo Wörld naïve café Ångström résumé", "Straße İstanbul ΑΘΗΝΑ σοφία ς",
    "我爱北京天安门 and 東京タワー", "北京 is big", "한국어 텍스트 처리", "مَرْحَبًا नमस्ते x\u0301", "Привет, мир! Ёлка",
    "emoji 😀 and 🤖 robots 👩‍👩‍👧", "ﬁnancial ｆｕｌｌｗｉｄｔｈ ①②③ ½ ™ ℃",
    "tabs\tand\nnewlines\r\n  spaces\u00a0nbsp\u2003emspace\u2028line",
    "zero\u200bwidth, soft\u00adhyphen, control\x07chars, NUL\x00 and \ufffd replacement",
    "don't stop-believing... U.S.A. $100.50 @user #tag ^caret `tick` ~tilde",
    "a" * 101 + " " + "b" * 100, "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "SELECT name FROM singer WHERE age > 30 ORDER BY age DESC;", "e-mail: jean.dupont@exemple.fr, tél. +33 1 23",
    "Ａｐｐｌｅ ｉＰｈｏｎｅ", "Ｈｅｌｌｏ，世界！", "ǅungla Ǆ ǆ", "ﬀ ﬃ ﬄ ﬅ", "ᾼ ῌ ῼ", "\u0130\u0049\u0131",
    "Ⅻ ⅻ", "a\x0bb a\x0cb a\x85b a\u2029b a\u1680b a\xadb", "private\ue000use\U000f0000 unassigned\u0378",
    "\U0002b830x x\U0002b930 \U0002ceb0x", "𝐁𝐨𝐥𝐝 𝑖𝑡𝑎𝑙𝑖𝑐", "\U0001F1EB\U0001F1F7 flag", "ﷺ ﷻ", "א ב ג hebrew", "ไทย ภาษา", "ភាសាខ្មែរ",
    "x" * 250, "word " * 600, "中" * 600, "é" * 300, "Ça, " * 400, "[SEP] " * 300,
]

WORDS = ("how many singers do we have show the name and country of every singer who is older than twenty list "
         "all stadiums sorted by capacity what is the average price of products in each category find the "
         "teachers who teach more than two courses return the flights from Aberdeen to Ashley which airline has "
         "most flights count the dogs owned by people in Virginia").split()


def parity_texts():
    rng = random.Random(7)
    texts = list(UNICODE_TEXTS)
    pool = WORDS + [t for text in UNICODE_TEXTS[8:36] for t in text.split()]
    for count in [rng.randint(1, 30) for _ in range(200)] + [rng.randint(200, 700) for _ in range(40)]:
        text = " ".join(rng.choice(pool) for _ in range(count))
        texts.append(text[0].upper() + text[1:] + rng.choice(["?", ".", "!", ""]))
    return texts


def reference_python():
    candidates = [os.environ.get("RELMEM_REFERENCE_PYTHON"), str(ROOT / ".venv-ref" / "bin" / "python"),
                  sys.executable]
    for python in filter(None, candidates):
        if not Path(python).exists():
            continue
        probe = subprocess.run([python, "-c", "import sentence_transformers, torch"], capture_output=True)
        if probe.returncode == 0:
            return python
    return None


@pytest.fixture(scope="module")
def model_dir():
    found = installed_model_dir("minilm")
    if found is None:
        pytest.skip("all-MiniLM-L6-v2 is not installed (scripts/install_models.sh)")
    return found


@pytest.fixture(scope="module")
def reference(model_dir, tmp_path_factory):
    python = reference_python()
    if python is None:
        pytest.skip("no Python with torch and sentence-transformers ($RELMEM_REFERENCE_PYTHON or .venv-ref)")
    folder = tmp_path_factory.mktemp("minilm")
    texts = parity_texts()
    (folder / "texts.json").write_text(json.dumps(texts), encoding="utf-8")
    subprocess.run([python, str(REFERENCE_SCRIPT), "embed", model_dir, str(folder / "texts.json"),
                    str(folder / "out.npy"), str(folder / "tokens.json")], check=True, capture_output=True)
    return texts, np.load(folder / "out.npy"), json.loads((folder / "tokens.json").read_text())


def test_registered_and_named_by_spec(model_dir):
    encoder = relmem.load_encoder("minilm")
    assert encoder.name == "minilm" and encoder.dim == 384
    vectors = encoder.encode(["How many singers do we have?", ""])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    elsewhere = relmem.load_encoder(f"minilm:{model_dir}")
    assert elsewhere.name == f"minilm:{model_dir}" and np.allclose(elsewhere.encode(["How many singers do we have?"]),
                                                                 vectors[:1])


def test_token_ids_match_the_fast_tokenizer(model_dir, reference):
    texts, _, expected = reference
    tokenizer = _relmem.BertEncoder(model_dir).tokenizer
    ours = [tokenizer.encode(t) for t in texts]
    differing = [(t[:60], a, b) for t, a, b in zip(texts, ours, expected) if a != b]
    assert not differing, differing[:3]
    assert max(len(ids) for ids in expected) == 256


def test_cosine_with_sentence_transformers(reference):
    texts, expected, _ = reference
    assert len(texts) >= 280 and expected.shape == (len(texts), 384)
    ours = relmem.load_encoder("minilm").encode(texts)
    expected = expected / np.linalg.norm(expected, axis=1, keepdims=True)
    cosines = np.sum(ours * expected, axis=1)
    worst = int(np.argmin(cosines))
    assert cosines[worst] >= MIN_COSINE, (repr(texts[worst][:80]), float(cosines[worst]))


def test_batching_does_not_change_embeddings(model_dir):
    texts = parity_texts()[:120]
    encoder = relmem.load_encoder("minilm")
    together = encoder.encode(texts)
    alone = np.vstack([encoder.encode([t]) for t in texts[:40]])
    assert np.max(np.abs(together[:40] - alone)) < 1e-5
