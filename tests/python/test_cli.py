import json
import os
import subprocess
import sys


def relmem_cli(*args):
    return subprocess.run([sys.executable, "-m", "relmem.cli", *args], capture_output=True, text=True, timeout=300)


def test_catalog_lists_databases(demo_dir):
    out = relmem_cli("catalog", str(demo_dir))
    assert out.returncode == 0, out.stderr
    assert "restaurants (2 tables)" in out.stdout
    assert "restaurant: id, name, food_type, city, rating, price_range" in out.stdout


def test_sql_prints_rows_and_refuses_writes(demo_dir):
    db = str(demo_dir / "restaurants" / "restaurants.sqlite")
    out = relmem_cli("sql", db, "SELECT DISTINCT city FROM restaurant ORDER BY city", "--json")
    assert out.returncode == 0, out.stderr
    assert ["LA"] in json.loads(out.stdout)["rows"]
    refused = relmem_cli("sql", db, "DROP TABLE restaurant")
    assert refused.returncode != 0 and "refused" in refused.stderr
    broken = relmem_cli("sql", db, "SELEC city FROM restaurant")
    assert broken.returncode != 0 and "syntax error" in broken.stderr
    missing = relmem_cli("sql", str(demo_dir / "missing.sqlite"), "SELECT 1")
    assert missing.returncode != 0 and "missing.sqlite" in missing.stderr


def test_catalog_missing_folder_is_a_clear_error(tmp_path):
    out = relmem_cli("catalog", str(tmp_path / "nope"))
    assert out.returncode == 2 and "no such file or folder" in out.stderr and "Traceback" not in out.stderr


def test_demo_runs(tmp_path, monkeypatch):
    for name in [n for n in os.environ if n.startswith("RELMEM_LLM_")]:
        monkeypatch.delenv(name)
    out = relmem_cli("demo", "--dir", str(tmp_path / "demo"), "--encoder", "hashing")
    assert out.returncode == 0, out.stderr
    assert "first-ranked database correct for 7 of 7" in out.stdout
    assert """"Los Angeles" = restaurant.city 'LA'""" in out.stdout and "no LLM: the local model is not installed" in out.stdout


def test_bench_index_json():
    out = relmem_cli("bench", "index", "--n", "2000", "--dim", "32", "--queries", "1,40", "--dtype", "fp32,int8",
                     "--rerank", "50", "--repeats", "1", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    for batch in ("1", "40"):
        entry = report["batches"][batch]
        assert entry["recall_queries"] == 200  # the default, above either batch
        assert entry["numpy_ms"] > 0 and entry["sgemv_gb_per_s"] > 0
        assert entry["fp32"]["recall@10_vs_exact_fp32"] == 1.0 and entry["fp32"]["gb_per_s"] > 0
        assert entry["int8"]["recall@10_vs_exact_fp32"] >= 0.8
        assert entry["int8+rerank50"]["recall@10_vs_exact_fp32"] >= 0.99


def test_bench_index_on_encoded_texts(tmp_path):
    texts = tmp_path / "texts.txt"
    texts.write_text("".join(f"text number {i} about topic {i % 7}\n" for i in range(60)))
    out = relmem_cli("bench", "index", "--texts", str(texts), "--encoder", "hashing", "--n", "40", "--queries", "1,4",
                     "--recall-queries", "5", "--dtype", "fp32,int8", "--repeats", "1", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    # The first 5 lines are the queries, the next 40 the stored rows; the encoder sets the dimension.
    assert report["vectors"] == f"hashing:512 of {texts}" and report["n"] == 40 and report["dim"] == 512
    assert report["batches"]["4"]["fp32"]["recall@10_vs_exact_fp32"] == 1.0
    too_few = relmem_cli("bench", "index", "--texts", str(texts), "--encoder", "hashing", "--queries", "1",
                         "--recall-queries", "60", "--json")
    assert too_few.returncode != 0 and "need more than the 60 queries" in too_few.stderr


def test_bench_encoder_reports_medians_of_its_short_runs():
    out = relmem_cli("bench", "encoder", "--encoder", "hashing", "--texts", "8", "--batch-sizes", "1,4",
                     "--min-seconds", "0.02", "--repeats", "3", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["repeats_short"] == 3 and report["reference"] is None
    assert "use-lite" in report["reference_unavailable"]
    for batch in ("1", "4"):
        runs = [run["sentences_per_s"] for run in report["short_runs"][batch]]
        assert len(runs) == 3 and report["sentences_per_s"]["short"][batch] == sorted(runs)[1]
        assert report["sentences_per_s"]["medium"][batch] > 0 and report["sentences_per_s"]["long"][batch] > 0
