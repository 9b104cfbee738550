"""`relmem bench selection` on the demo collection (and on a Spider dev subset when ../shared is present)."""
import argparse
import json
import os

import pytest

from conftest import SPIDER, requires_shared
from relmem import Error
from relmem._relmem import WordNet, cuda_device_count
from relmem.bench import selection

QUESTIONS = [
    {"question": "Which hospital has the most beds, and how many doctors work there?", "db_id": "hospitals"},
    {"question": "What is the average salary of the employees of each department?", "db_id": "employees"},
    {"question": "Which airline has the cheapest flight between two airports?", "db_id": "flights"},
    {"question": "Which singers gave concerts at each venue?", "db_id": "singers"},
    {"question": "How many doctors work at hospitals in Boston, and how large is its population?",
     "db_ids": ["hospitals", "world_cities"]},
]


def bench(tmp_path, dbs, questions, *options):
    path = tmp_path / "questions.json"
    path.write_text(json.dumps(questions))
    parser = argparse.ArgumentParser()
    selection.add_arguments(parser)
    args = parser.parse_args(["--dbs", str(dbs), "--questions", str(path), "--no-progress", *options])
    return selection.run(args)


def test_demo_collection_keys_and_ranges(tmp_path, demo_dir):
    out = bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:1024", "--composite", "4", "--synthetic", "60",
                "--calibrate", "none")
    assert out["benchmark"] == "selection" and out["encoder"] == "hashing:1024" and out["model"] is None
    assert out["databases"] == 7 and out["n"] == len(QUESTIONS) and out["build_seconds"] > 0
    for report in (out, out["composite"]):
        for key in ("recall@1", "recall@5", "recall@10", "all_in_top5", "precision", "recall", "f1"):
            assert 0.0 <= report[key] <= 1.0, key
        assert report["recall@1"] <= report["recall@5"] <= report["recall@10"]
        assert report["ms_per_question"] > 0
    assert out["composite"]["n"] == 4
    assert out["recall@5"] == 1.0  # 7 databases: every gold one is in the top 5
    assert out["synthetic"]["databases"] == 60 and out["synthetic"]["ms_per_question"] > 0
    assert out["calibration"]["file"] is None


def test_a_kept_synthetic_memory_reopens_alike(tmp_path, demo_dir):
    kept = tmp_path / "kept"
    out = bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:1024", "--synthetic", "30", "--calibrate", "none",
                "--keep", str(kept))
    assert (kept / "databases.bin").is_file() and (kept / "values.postings").is_file()
    again = bench(tmp_path, demo_dir, QUESTIONS, "--reopen", str(kept))["reopened"]
    first = out["synthetic"]["reopened"]
    assert [again[f"recall@{k}"] for k in (1, 5, 10)] == [first[f"recall@{k}"] for k in (1, 5, 10)]
    assert again["rss_bytes"] >= again["rss_anon_bytes"] > 0 and again["open_and_first_answer_seconds"] > 0
    assert again["cpu_ms_per_question"] > 0


def test_device_and_batches_are_reported_beside_the_one_at_a_time_latency(tmp_path, demo_dir):
    out = bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:1024", "--synthetic", "30", "--calibrate", "none",
                "--device", "cpu", "--batch", "4")
    for report in (out["synthetic"], out["synthetic"]["reopened"]):
        assert report["device"] == "cpu" and report["batch"] == 4 and report["batches"] == 2  # 5 questions
        assert report["ms_per_batch"] > 0 and report["ms_per_question_in_batch"] > 0 and report["ms_per_question"] > 0
        assert report["ms_per_batch"] >= report["ms_per_question_in_batch"]


def test_device_and_batch_options_fail_clearly(tmp_path, demo_dir):
    with pytest.raises(Error, match="apply to --synthetic"):
        bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:64", "--calibrate", "none", "--batch", "4")
    with pytest.raises(Error, match="positive"):
        bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:64", "--calibrate", "none", "--synthetic", "10",
              "--batch", "-1")
    if cuda_device_count() == 0:
        with pytest.raises(Error, match="selection memory on device 'cuda'"):
            bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:64", "--calibrate", "none", "--synthetic",
                  "10", "--device", "cuda")


@pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")
def test_a_synthetic_memory_on_the_gpu_ranks_as_on_the_cpu(tmp_path, demo_dir):
    options = ("--encoder", "hashing:1024", "--synthetic", "40", "--calibrate", "none", "--batch", "4")
    cpu = bench(tmp_path, demo_dir, QUESTIONS, *options)["synthetic"]
    gpu = bench(tmp_path, demo_dir, QUESTIONS, *options, "--device", "cuda")["synthetic"]
    assert gpu["device"] == "cuda:0" and gpu["reopened"]["device"] == "cuda:0"
    for k in (1, 5, 10):
        assert gpu[f"recall@{k}"] == cpu[f"recall@{k}"] and gpu["reopened"][f"recall@{k}"] == cpu[f"recall@{k}"]


def test_natural_composites_and_synonym_questions(tmp_path, demo_dir):
    out = bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:1024", "--natural-composite", "6", "--parts", "3",
                "--synonym-questions", "--calibrate", "none")
    natural = out["natural_composite"]
    assert natural["n"] == 6 and natural["parts"] == 3
    assert natural["all_in_top5"] >= 0.5  # 7 databases, 3 parts each: measured 1.0
    assert 0.0 < natural["f1"] <= 1.0
    if WordNet.available():
        assert out["synonym_questions"]["n"] >= 1  # e.g. "salary" -> "wage"
    composites = selection.make_composites([(q["question"], [q["db_id"]]) for q in QUESTIONS[:4]], 5, 0, 3,
                                           "concatenate")
    assert all(len(dbs) == 3 and "Q1:" not in text for text, dbs in composites)


def test_composites_are_also_ranked_by_their_parts(tmp_path, demo_dir):
    out = bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:1024", "--composite", "4",
                "--natural-composite", "4", "--oracle-parts", "--calibrate", "none")
    for key in ("composite", "natural_composite"):
        oracle = out[key]["oracle_parts"]
        assert oracle["n"] == 4 and 0.0 <= oracle["all_in_top5"] <= 1.0 and "f1" not in oracle
    assert "oracle_parts" not in bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:1024", "--composite",
                                       "2", "--calibrate", "none")["composite"]
    singles = [(q["question"], [q["db_id"]]) for q in QUESTIONS[:4]]
    made, parts_of = selection.make_composites(singles, 3, 0, 2, "concatenate", with_parts=True)
    for text, dbs in made:
        assert parts_of[text] == sorted((q for q, db in singles if q in text and db[0] in dbs), key=text.find)
        assert " ".join(parts_of[text]) == text


def test_the_gold_database_ranks_first(tmp_path, demo_dir):
    out = bench(tmp_path, demo_dir, QUESTIONS[:1], "--encoder", "hashing:1024", "--calibrate", "none")
    assert out["recall@1"] == 1.0 and out["all_in_top5"] == 1.0


def test_calibration_questions_never_overlap_the_evaluated_ones(tmp_path, demo_dir):
    calibration = tmp_path / "calibration.json"
    calibration.write_text(json.dumps(QUESTIONS[:2] + [
        {"question": "List the restaurants with a rating above 4.", "db_id": "restaurants"},
        {"question": "Which courses have the most students enrolled?", "db_id": "university"}]))
    out = bench(tmp_path, demo_dir, QUESTIONS, "--encoder", "hashing:1024", "--calibrate", str(calibration))
    assert out["calibration"]["fitted"] and out["calibration"]["questions"] == 2  # the two shared ones dropped
    assert 0.0 <= out["calibration"]["threshold"] <= 1.0


def test_a_model_is_calibrated_on_its_held_out_databases_only(tmp_path, demo_dir):
    from relmem import Catalog, SelectionMemory

    calibration = tmp_path / "calibration.json"
    calibration.write_text(json.dumps([
        {"question": "Which hospital has the most beds?", "db_id": "hospitals"},
        {"question": "Which doctors work in Boston?", "db_id": "hospitals"},
        {"question": "List the restaurants with a rating above 4.", "db_id": "restaurants"},
        {"question": "Which courses have the most students enrolled?", "db_id": "university"}]))
    memory = SelectionMemory.build(Catalog(str(demo_dir)), "hashing:1024")
    out = selection.calibrate(memory, str(calibration), [], 0, ["restaurants", "university"])
    assert out["databases"] == 2 and out["questions"] == 2  # the hospitals questions are left out
    assert "databases" not in selection.calibrate(memory, str(calibration), [], 0)

    class Model:
        training_info = {"heldout_database_names": ["restaurants"]}

    assert selection.model_heldout_databases(Model()) == ["restaurants"]
    assert selection.model_heldout_databases(None) is None


def test_a_fine_tuned_encoder_names_its_held_out_databases(tmp_path):
    class Encoder:
        def __init__(self, name):
            self.name = name

    (tmp_path / "relevance_head.json").write_text(json.dumps(
        {"classifier": "card-cosine", "scale": 10.0, "bias": -4.0,
         "training": {"heldout_database_names": ["restaurants", "university"]}}))
    assert selection.encoder_heldout_databases(Encoder(f"minilm:{tmp_path}")) == ["restaurants", "university"]
    assert selection.encoder_heldout_databases(Encoder("minilm")) is None
    assert selection.encoder_heldout_databases(Encoder(f"minilm:{tmp_path / 'absent'}")) is None
    (tmp_path / "relevance_head.json").write_text("{not json")
    with pytest.raises(Error, match="relevance_head.json"):
        selection.encoder_heldout_databases(Encoder(f"minilm:{tmp_path}"))


def test_bad_inputs_are_clear_errors(tmp_path, demo_dir):
    with pytest.raises(Error, match="not under"):
        bench(tmp_path, demo_dir, [{"question": "How many pets?", "db_id": "pets_1"}], "--encoder", "hashing:64")
    with pytest.raises(Error, match="entry 0"):
        bench(tmp_path, demo_dir, [{"question": "How many pets?"}], "--encoder", "hashing:64")


@requires_shared(SPIDER)
def test_spider_dev_subset(tmp_path):
    dev = json.loads((SPIDER / "dev.json").read_text())
    dbs = sorted({q["db_id"] for q in dev})[:8]
    folder = tmp_path / "dbs"
    for db in dbs:
        (folder / db).mkdir(parents=True)
        os.symlink(SPIDER / "database" / db / f"{db}.sqlite", folder / db / f"{db}.sqlite")
    questions = [q for q in dev if q["db_id"] in dbs][::10]
    out = bench(tmp_path, folder, questions, "--encoder", "hashing:4096", "--composite", "20", "--calibrate", "none")
    assert out["databases"] == 8 and out["n"] == len(questions) >= 20
    assert out["recall@1"] >= 0.9 and out["recall@5"] >= 0.95  # measured: 0.98 and 1.0
    assert out["composite"]["all_in_top5"] >= 0.9  # measured: 1.0


@pytest.mark.skipif(not WordNet.available(), reason="WordNet is not installed (Debian: wordnet-base)")
def test_schema_words_are_replaced_by_synonyms_in_number_and_case():
    import random

    from relmem.bench.synonyms import replace_schema_words
    text, replaced = replace_schema_words("Singers from each country?", {"singer", "country"}, WordNet(),
                                          random.Random(0))
    assert [word for word, _ in replaced] == ["Singers", "country"]
    first, second = (synonym for _, synonym in replaced)
    assert first[0].isupper() and first.endswith("s") and first.lower().rstrip("s") in ("vocalist", "vocalizer",
                                                                                         "vocaliser")
    assert second in ("state", "nation", "land", "commonwealth", "res publica", "body politic")
    assert text == f"{first} from each {second}?"
