"""The C++ training executables run as a user runs them: relmem-train-relevance trains the feature model and the
card-cosine classifier on the demo collection (the latter on a tiny random BERT), relmem-score-card-relevance scores
the result; the files each writes, and what each refuses."""
import json
import os
import pathlib
import struct
import subprocess

import numpy as np
import pytest
from conftest import ROOT

import relmem

BUILD = os.environ.get("RELMEM_BUILD_DIR")  # set by `make test`, where the executable must exist
TRAINER = pathlib.Path(BUILD or ROOT / "build") / "training" / "relmem-train-relevance"
SCORER = TRAINER.with_name("relmem-score-card-relevance")
pytestmark = pytest.mark.skipif(not BUILD and not TRAINER.exists(),
                                reason="the training executables are not built (`make build-all` builds them)")

FORMS = ["How many {t} are there?", "List the {c} of every {t}.", "What is the largest {c} of the {t}?",
         "Show each {t} with its {c}."]


@pytest.fixture(scope="module")
def questions(demo_dir, tmp_path_factory):
    """Questions made from each demo database's table and column names, in Spider's format."""
    catalog = relmem.Catalog(str(demo_dir))
    items = []
    for db in catalog.databases:
        for table in catalog.schema(db).tables:
            column = table.columns[1].name.replace("_", " ")
            items += [{"question": form.format(t=table.name.replace("_", " "), c=column), "db_id": db}
                      for form in FORMS]
    path = tmp_path_factory.mktemp("questions") / "questions.json"
    path.write_text(json.dumps(items))
    return path


@pytest.fixture(scope="module")
def tiny_bert(questions, tmp_path_factory):
    """A BERT model folder with random weights (2 layers, width 16) and a vocabulary of the questions' words."""
    folder = tmp_path_factory.mktemp("tiny-bert")
    words = sorted({w.strip("?.,").lower() for q in json.loads(questions.read_text()) for w in q["question"].split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "?", ".", ",", "(", ")", ":", "_"] + words
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    width, layers, inner, positions = 16, 2, 32, 64
    (folder / "config.json").write_text(json.dumps({
        "model_type": "bert", "hidden_size": width, "num_attention_heads": 2, "num_hidden_layers": layers,
        "intermediate_size": inner, "vocab_size": len(vocab), "max_position_embeddings": positions,
        "type_vocab_size": 2, "layer_norm_eps": 1e-12, "hidden_act": "gelu"}))
    rng = np.random.default_rng(0)
    tensors = {"embeddings.word_embeddings.weight": rng.normal(0, 1, (len(vocab), width)),
               "embeddings.position_embeddings.weight": rng.normal(0, 1, (positions, width)),
               "embeddings.token_type_embeddings.weight": rng.normal(0, 1, (2, width))}

    def norm(name):
        tensors[name + ".weight"] = 1 + rng.normal(0, 0.1, width)
        tensors[name + ".bias"] = rng.normal(0, 0.1, width)

    def dense(name, n_in, n_out):
        tensors[name + ".weight"] = rng.normal(0, 0.3, (n_out, n_in))
        tensors[name + ".bias"] = rng.normal(0, 0.1, n_out)

    norm("embeddings.LayerNorm")
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for part in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
            dense(p + part, width, width)
        norm(p + "attention.output.LayerNorm")
        dense(p + "intermediate.dense", width, inner)
        dense(p + "output.dense", inner, width)
        norm(p + "output.LayerNorm")
    header, offset, data = {}, 0, []
    for name, values in tensors.items():
        raw = np.asarray(values, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(np.shape(values)), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data.append(raw)
    text = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + b"".join(data))
    return folder


def train(*flags):
    return subprocess.run([str(TRAINER), "--threads", "1", *map(str, flags)], capture_output=True, text=True,
                          timeout=600)


def score(*flags):
    return subprocess.run([str(SCORER), *map(str, flags)], capture_output=True, text=True, timeout=600)


def test_the_feature_model_is_written_and_loads(demo_dir, questions, tmp_path):
    out = tmp_path / "demo.model"
    run = train("--data", questions, "--dbs", demo_dir, "--out", out, "--encoder", "hashing:512", "--epochs", 2,
                "--heldout", 0.3, "--hidden", 4)
    assert run.returncode == 0, run.stderr
    assert "best epoch" in run.stdout and f"wrote {out}" in run.stdout
    model = relmem.RelevanceModel.load(str(out))
    assert model.config.encoder == "hashing:512"


@pytest.fixture(scope="module")
def card_cosine(demo_dir, questions, tiny_bert, tmp_path_factory):
    """The card-cosine classifier trained on the tiny BERT: (model folder, the trainer's run)."""
    out = tmp_path_factory.mktemp("trained") / "card-cosine"
    run = train("--classifier", "card-cosine", "--encoder", f"bert:{tiny_bert}", "--data", questions, "--dbs",
                demo_dir, "--out", out, "--finetune-layers", 1, "--epochs", 2, "--batch", 8, "--lr", 1e-3,
                "--weight-decay", 10, "--heldout", 0.3, "--negatives", 2)
    return out, run


def test_the_card_cosine_classifier_is_a_model_folder_that_loads_as_an_encoder(card_cosine, tiny_bert):
    out, run = card_cosine
    assert run.returncode == 0, run.stderr
    assert "epoch 2/2" in run.stdout and "held-out single questions" in run.stdout
    head = json.loads((out / "relevance_head.json").read_text())
    assert head["classifier"] == "card-cosine" and np.isfinite([head["scale"], head["bias"]]).all()
    assert head["training"]["weight_decay"] == 10 and len(head["training"]["heldout_database_names"]) == 2
    tuned, untrained = relmem.load_encoder(f"bert:{out}"), relmem.load_encoder(f"bert:{tiny_bert}")
    text = ["How many flight are there?"]
    assert tuned.dim == 16
    assert np.abs(tuned.encode(text) - untrained.encode(text)).max() > 1e-4  # the top layer was trained


def test_the_scorer_reads_the_trained_classifier(card_cosine, demo_dir, questions, tmp_path):
    out, _ = card_cosine
    unanswerable = tmp_path / "none.json"
    unanswerable.write_text(json.dumps(["Who wrote the play Hamlet?", "What is two plus two?"]))
    run = score("--model", out, "--dbs", demo_dir, "--questions", questions, "--no-database", unanswerable)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["databases"] == 7 and result["questions"]["n"] == len(json.loads(questions.read_text()))
    assert 0 <= result["questions"]["recall@1"] <= result["questions"]["recall@5"] <= 1
    assert result["no_database"][0]["n"] == 2 and 0 <= result["no_database"][0]["max_p_max"] <= 1


def test_the_scorer_names_what_is_wrong_with_its_inputs(card_cosine, demo_dir, tiny_bert, tmp_path):
    out, _ = card_cosine
    bad = tmp_path / "bad.json"
    bad.write_text('["a question", 3]')
    cases = [(["--model", out, "--dbs", demo_dir, "--no-database", bad], "entry 1 is not a string"),
             (["--model", out, "--dbs", demo_dir, "--no-database", tmp_path / "absent.json"], "absent.json"),
             (["--model", out, "--dbs", tmp_path], "no databases in"),
             (["--model", tiny_bert, "--dbs", demo_dir], "relevance_head.json")]
    for flags, message in cases:
        run = score(*flags)
        assert run.returncode == 1 and message in run.stderr, (flags, run.stderr)
    run = score("--model", out, "--dbs", demo_dir, "--threads", "many")
    assert run.returncode == 2 and "--threads" in run.stderr


def test_an_existing_output_or_one_on_an_input_is_refused_and_left_as_it_is(demo_dir, questions, tmp_path):
    existing = tmp_path / "taken.model"
    existing.write_text("someone's file")
    run = train("--data", questions, "--dbs", demo_dir, "--out", existing, "--encoder", "hashing:512")
    assert run.returncode == 1 and "exists" in run.stderr
    assert existing.read_text() == "someone's file"
    before = sorted(p.name for p in demo_dir.iterdir())
    run = train("--data", questions, "--dbs", demo_dir, "--out", demo_dir / "model", "--encoder", "hashing:512")
    assert run.returncode == 1 and "overlaps --dbs" in run.stderr
    assert sorted(p.name for p in demo_dir.iterdir()) == before
    run = train("--data", tmp_path / "missing.json", "--dbs", demo_dir, "--out", tmp_path / "m", "--encoder",
                "hashing:512")
    assert run.returncode == 1 and "missing.json" in run.stderr and not (tmp_path / "m").exists()


@pytest.mark.parametrize("classifier, flag", [("card-cosine", "--listwise"), ("card-cosine", "--hidden"),
                                              ("features", "--head-lr"), ("features", "--max-questions")])
def test_a_flag_of_the_other_classifier_is_refused(demo_dir, questions, tmp_path, classifier, flag):
    run = train("--classifier", classifier, "--data", questions, "--dbs", demo_dir, "--out", tmp_path / "m", flag, 1)
    assert run.returncode == 2 and f"{flag} applies to --classifier" in run.stderr
    assert not (tmp_path / "m").exists()
