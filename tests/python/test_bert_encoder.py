"""The BERT encoder against independent Python/NumPy implementations of the same tokenizer and forward pass.

Weights are random but laid out exactly like all-MiniLM-L6-v2 (../shared/models/minilm-layout holds its real vocab,
configs and safetensors header, without weights), written as real .safetensors files in F32, F16 and BF16.
"""
import json
import math
import pathlib
import shutil
import struct
import unicodedata

import numpy as np
import pytest

import relmem
from relmem import _relmem

LAYOUT = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "models" / "minilm-layout"
pytestmark = pytest.mark.skipif(not LAYOUT.is_dir(), reason="../shared/models/minilm-layout is absent")

CONFIG_FILES = ["config.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json"]
SENTENCES = ["How many singers do we have?", "Ça coûte 100 € à Zürich!", "", "北京 is big"]
TOKENIZER_TEXTS = SENTENCES + [
    "List the names of all Los Angeles stadiums, sorted by capacity.",
    "Hello, World! How are you?",
    "Héllo Wörld naïve café Ångström résumé",
    "我爱北京天安门 and 東京タワー",
    "don't stop-believing... U.S.A. $100.50 @user #tag ^caret `tick` ~tilde",
    "tabs\tand\nnewlines\r\n  spaces\u00a0nbsp\u2003emspace\u2028line",
    "zero\u200bwidth, control\x07chars, NUL\x00 and \ufffd replacement, private\ue000use\U000f0000",
    "\U0002b830x x\U0002b930",
    "emoji 😀 and 🤖 robots",
    "a" * 101 + " " + "b" * 100,
    "Straße İstanbul ΑΘΗΝΑ σοφία",
    "한국어 텍스트",
    "hello[SEP]world [CLS] [MASK]x [unk]",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "ﬁnancial ｆｕｌｌｗｉｄｔｈ",
    "مَرْحَبًا नमस्ते x\u0301",
    " ".join(["token"] * 300),
]


# ---------------------------------------------------------------------------------------------------------------
# Reference tokenizer: Hugging Face's BertTokenizer logic, written from its description with Python's unicodedata.
# Lower-casing is per character, matching relmem's documented behavior (no final-sigma rule).

def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    return ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf", "Co")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(cp):
    return any(a <= cp <= b for a, b in [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
                                         (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF),
                                         (0x2F800, 0x2FA1F)])


class ReferenceWordPiece:
    SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

    def __init__(self, vocab_path, max_length):
        self.vocab = {}
        with open(vocab_path, encoding="utf-8") as f:
            for i, line in enumerate(f):
                self.vocab[line.rstrip("\n")] = i
        self.max_length = max_length

    def basic_tokenize(self, text):
        text = "".join(" " if is_whitespace(c) else c
                       for c in text if ord(c) not in (0, 0xFFFD) and not is_control(c))
        text = "".join(f" {c} " if is_cjk(ord(c)) else c for c in text)
        words = []
        for word in text.split():
            word = "".join(c.lower() for c in word)
            word = "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")
            current = ""
            for c in word:
                if is_punctuation(c):
                    words += [current, c] if current else [c]
                    current = ""
                else:
                    current += c
            if current:
                words.append(current)
        return words

    def wordpiece(self, word):
        if len(word) > 100:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = ("##" if start else "") + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:
                return ["[UNK]"]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text):
        tokens, rest = [], text
        while rest:
            hits = [(rest.find(s), s) for s in self.SPECIALS if s in rest]
            position, special = min(hits) if hits else (len(rest), None)
            for word in self.basic_tokenize(rest[:position]):
                tokens += self.wordpiece(word)
            if special is None:
                break
            tokens.append(special)
            rest = rest[position + len(special):]
        return tokens

    def encode(self, text):
        pieces = self.tokenize(text)[: self.max_length - 2]
        return [self.vocab["[CLS]"]] + [self.vocab[p] for p in pieces] + [self.vocab["[SEP]"]]


# ---------------------------------------------------------------------------------------------------------------
# Reference forward pass: a padded batch with an additive attention mask, in float64, as in Hugging Face's BertModel.
# With half_weights, the encoder layers' dense weights are rounded to fp16 first, as relmem keeps them by default
# where its matrix kernel reads fp16 (BertEncoder.half_weights).

erf = np.vectorize(math.erf)


def reference_embeddings(weights, config, sequences, pooling="mean", normalize=True, half_weights=False):
    def w(name):
        return weights[name].astype(np.float64)

    def dense(t, name):
        weight = weights[name + ".weight"].astype(np.float16) if half_weights else weights[name + ".weight"]
        return t @ weight.astype(np.float64).T + w(name + ".bias")

    def layer_norm(t, name):
        mean = t.mean(-1, keepdims=True)
        var = ((t - mean) ** 2).mean(-1, keepdims=True)
        return (t - mean) / np.sqrt(var + config["layer_norm_eps"]) * w(name + ".weight") + w(name + ".bias")

    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_size = hidden // heads
    batch, length = len(sequences), max(len(s) for s in sequences)
    ids = np.zeros((batch, length), dtype=np.int64)
    mask = np.zeros((batch, length))
    for i, seq in enumerate(sequences):
        ids[i, : len(seq)] = seq
        mask[i, : len(seq)] = 1
    x = (weights["embeddings.word_embeddings.weight"][ids].astype(np.float64)
         + w("embeddings.position_embeddings.weight")[:length][None] + w("embeddings.token_type_embeddings.weight")[0])
    x = layer_norm(x, "embeddings.LayerNorm")
    additive_mask = (1.0 - mask)[:, None, None, :] * -1e30

    def split_heads(t):
        return t.reshape(batch, length, heads, head_size).transpose(0, 2, 1, 3)

    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        q, k, v = (split_heads(dense(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
        scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head_size) + additive_mask
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        x = layer_norm(dense(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        inner = dense(x, p + "intermediate.dense")
        inner = 0.5 * inner * (1.0 + erf(inner / math.sqrt(2.0)))
        x = layer_norm(dense(inner, p + "output.dense") + x, p + "output.LayerNorm")
    if pooling == "cls":
        pooled = x[:, 0]
    else:
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    if normalize:
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    return pooled


# ---------------------------------------------------------------------------------------------------------------
# Random weights written as real safetensors files.

def random_weights(header, seed=7):
    rng = np.random.default_rng(seed)
    weights = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        shape = info["shape"]
        if info["dtype"] == "I64":
            weights[name] = np.arange(np.prod(shape), dtype=np.int64).reshape(shape)
        elif name.endswith("LayerNorm.weight"):
            weights[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        elif name.endswith(".bias"):
            weights[name] = (0.05 * rng.standard_normal(shape)).astype(np.float32)
        elif name.startswith("embeddings."):
            weights[name] = (0.5 * rng.standard_normal(shape, dtype=np.float32))
        else:
            weights[name] = (0.05 * rng.standard_normal(shape, dtype=np.float32))
    return weights


def stored_bytes(array, dtype):
    """The bytes written for one tensor, and the float32 values a reader must decode from them."""
    if array.dtype == np.int64:
        return array.astype("<i8").tobytes(), array
    if dtype == "F32":
        return array.astype("<f4").tobytes(), array
    if dtype == "F16":
        half = array.astype("<f2")
        return half.tobytes(), half.astype(np.float32)
    top = (array.astype("<f4").view("<u4") >> 16).astype("<u2")  # BF16 by truncation
    return top.tobytes(), (top.astype("<u4") << 16).view("<f4")


def write_safetensors(path, header, weights, dtype):
    entries, chunks, offset, decoded = {"__metadata__": header["__metadata__"]}, [], 0, {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        raw, decoded[name] = stored_bytes(weights[name], dtype)
        stored_dtype = "I64" if info["dtype"] == "I64" else dtype
        entries[name] = {"dtype": stored_dtype, "shape": info["shape"], "data_offsets": [offset, offset + len(raw)]}
        if dtype == "F32":
            assert entries[name]["data_offsets"] == info["data_offsets"], name
        chunks.append(raw)
        offset += len(raw)
    header_bytes = json.dumps(entries).encode()
    header_bytes += b" " * (-len(header_bytes) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)))
        f.write(header_bytes)
        for raw in chunks:
            f.write(raw)
    return decoded


def model_dir_with(tmp, name, weights_file=None):
    """A model directory with the layout's config files, and model.safetensors linked in when given."""
    directory = tmp / name
    directory.mkdir()
    for f in CONFIG_FILES:
        shutil.copyfile(LAYOUT / f, directory / f)
    if weights_file is not None:
        (directory / "model.safetensors").symlink_to(weights_file)
    return directory


@pytest.fixture(scope="module")
def layout():
    header = json.loads((LAYOUT / "safetensors_header.json").read_text())
    config = json.loads((LAYOUT / "config.json").read_text())
    return header, config


@pytest.fixture(scope="module")
def weights(layout):
    return random_weights(layout[0])


@pytest.fixture(scope="module")
def models(layout, weights, tmp_path_factory):
    """Model directory and decoded weights for each stored dtype, written on first use."""
    tmp = tmp_path_factory.mktemp("bert")
    made = {}

    def get(dtype):
        if dtype not in made:
            directory = model_dir_with(tmp, dtype)
            decoded = write_safetensors(directory / "model.safetensors", layout[0], weights, dtype)
            made[dtype] = (directory, decoded)
        return made[dtype]

    return get


@pytest.fixture(scope="module")
def reference_tokenizer():
    return ReferenceWordPiece(LAYOUT / "vocab.txt", max_length=256)


@pytest.fixture(scope="module")
def raw_reference(models, layout, reference_tokenizer):
    """Unnormalized mean-pooled reference embeddings of SENTENCES for each stored dtype, computed once."""
    computed = {}

    def get(dtype, half_weights=False):
        if (dtype, half_weights) not in computed:
            ids = [reference_tokenizer.encode(s) for s in SENTENCES]
            computed[dtype, half_weights] = reference_embeddings(models(dtype)[1], layout[1], ids, normalize=False,
                                                                 half_weights=half_weights)
        return computed[dtype, half_weights]

    return get


# ---------------------------------------------------------------------------------------------------------------
# Tokenizer

def test_tokenizer_matches_reference(reference_tokenizer):
    tokenizer = _relmem.WordPieceTokenizer.from_directory(str(LAYOUT))
    assert tokenizer.vocab_size == 30522
    assert tokenizer.max_length == 256  # model_max_length in tokenizer_config.json
    for text in TOKENIZER_TEXTS:
        assert tokenizer.tokenize(text) == reference_tokenizer.tokenize(text), text
        assert tokenizer.encode(text) == reference_tokenizer.encode(text), text


def test_tokenizer_known_examples():
    tokenizer = _relmem.WordPieceTokenizer.from_directory(str(LAYOUT))
    # bert-base-uncased ids, and the example from Google's BERT README.
    assert tokenizer.encode("Hello world") == [101, 7592, 2088, 102]
    assert tokenizer.tokenize("John Johanson's house") == ["john", "johan", "##son", "'", "s", "house"]
    assert tokenizer.tokenize("Héllo WÖRLD") == ["hello", "world"]
    assert tokenizer.tokenize("北京") == ["北", "京"]
    assert tokenizer.tokenize("😀") == ["[UNK]"]
    long_ids = tokenizer.encode(" ".join(["token"] * 300))
    assert len(long_ids) == 256 and long_ids[0] == 101 and long_ids[-1] == 102


# ---------------------------------------------------------------------------------------------------------------
# Encoder

@pytest.mark.parametrize("dtype", ["F32", "F16", "BF16"])
def test_encoder_matches_numpy(dtype, models, raw_reference):
    directory, _ = models(dtype)
    encoder = relmem.load_encoder(f"bert:{directory}")
    assert encoder.dim == 384
    assert encoder.name == f"bert:{directory}"
    got = encoder.encode(SENTENCES)
    assert got.dtype == np.float32 and got.shape == (len(SENTENCES), 384)
    raw = raw_reference(dtype, encoder.half_weights)
    expected = raw / np.linalg.norm(raw, axis=1, keepdims=True)
    assert np.abs(got - expected).max() <= 1e-4
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_float_weights_match_the_unrounded_reference(models, reference_tokenizer, layout):
    directory, weights = models("F32")
    ids = [reference_tokenizer.encode(s) for s in SENTENCES]
    exact = reference_embeddings(weights, layout[1], ids, half_weights=False)
    encoder = _relmem.BertEncoder(str(directory), half_weights=False)
    assert not encoder.half_weights
    assert np.abs(encoder.encode(SENTENCES) - exact).max() <= 1e-5


def test_raw_mean_pooling_in_small_batches(models, raw_reference):
    directory, _ = models("F32")
    encoder = _relmem.BertEncoder(str(directory), normalize=False, batch_size=3)
    got = encoder.encode(SENTENCES)
    assert np.abs(got - raw_reference("F32", encoder.half_weights)).max() <= 1e-4
    assert not np.allclose(np.linalg.norm(got, axis=1), 1.0)  # really unnormalized


def test_long_text_is_truncated_to_model_max_length(models):
    directory, _ = models("F32")
    encoder = relmem.load_encoder(f"bert:{directory}")
    assert encoder.max_length == 256  # model_max_length in tokenizer_config.json
    words = ["the", "cat", "sat", "on", "a", "mat"] * 50  # one word piece each
    got = encoder.encode([" ".join(words), " ".join(words[:254])])
    assert np.abs(got[0] - got[1]).max() <= 1e-6


def test_sentence_transformers_cls_pooling_and_max_seq_length(models, layout, tmp_path):
    f32_dir, decoded = models("F32")
    directory = model_dir_with(tmp_path, "st", f32_dir / "model.safetensors")
    (directory / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]))
    (directory / "1_Pooling").mkdir()
    (directory / "1_Pooling" / "config.json").write_text(json.dumps({
        "word_embedding_dimension": 384, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False,
        "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False}))
    (directory / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 12}))
    encoder = _relmem.BertEncoder(str(directory), normalize=False)
    assert encoder.max_length == 12
    texts = ["one two three four five six seven eight nine ten eleven twelve", "tiny"]
    short = ReferenceWordPiece(LAYOUT / "vocab.txt", max_length=12)
    got = encoder.encode(texts)
    expected = reference_embeddings(decoded, layout[1], [short.encode(t) for t in texts], pooling="cls",
                                    normalize=False, half_weights=encoder.half_weights)
    assert np.abs(got - expected).max() <= 1e-4


# ---------------------------------------------------------------------------------------------------------------
# Bad input

def test_missing_or_corrupt_model_raises(tmp_path, layout):
    with pytest.raises(relmem.Error, match="does not exist"):
        relmem.load_encoder(f"bert:{tmp_path / 'nowhere'}")
    with pytest.raises(relmem.Error, match="model directory"):
        relmem.load_encoder("bert")
    directory = model_dir_with(tmp_path, "corrupt")
    with pytest.raises(relmem.Error, match="model.safetensors"):
        relmem.load_encoder(f"bert:{directory}")
    weights_path = directory / "model.safetensors"

    weights_path.write_bytes(b"\x01\x02")
    with pytest.raises(relmem.Error, match="too small"):
        relmem.load_encoder(f"bert:{directory}")

    weights_path.write_bytes(struct.pack("<Q", 10) + b"{not json}")
    with pytest.raises(relmem.Error, match="not valid JSON"):
        relmem.load_encoder(f"bert:{directory}")

    header = json.dumps(layout[0]).encode()  # the full layout but no tensor data at all
    weights_path.write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(relmem.Error, match="truncated"):
        relmem.load_encoder(f"bert:{directory}")

    small = {"embeddings.word_embeddings.weight": np.zeros((3, 4), dtype=np.float32)}
    small_header = {"__metadata__": {}, "embeddings.word_embeddings.weight": {"dtype": "F32", "shape": [3, 4],
                                                                       "data_offsets": [0, 48]}}
    write_safetensors(weights_path, small_header, small, "F32")
    with pytest.raises(relmem.Error, match=r"shape \[3, 4\], expected \[30522, 384\]"):
        relmem.load_encoder(f"bert:{directory}")
