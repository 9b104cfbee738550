"""`relmem bench encoder --compare`: relmem is measured in a child of its own, and an implementation that cannot run
is reported with its reason instead of figures."""
import json
import subprocess
import sys

import pytest

from relmem.encoders import installed_model_dir, load_encoder


def test_compare_reports_relmem_and_why_the_others_are_missing():
    if installed_model_dir("minilm") is None:
        pytest.skip("all-MiniLM-L6-v2 is not installed (scripts/install_models.sh)")
    # This Python has neither torch nor sentence-transformers, so the export and both reference runs fail.
    out = subprocess.run([sys.executable, "-m", "relmem.cli", "bench", "encoder", "--encoder", "minilm", "--compare",
                          "--reference-python", sys.executable, "--texts", "8", "--batch-sizes", "1,4",
                          "--min-seconds", "0.05", "--repeats", "2", "--json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["threads"] == 2 and report["repeats"] == 2
    assert set(report["texts_per_s"]) == {"relmem"} and report["speedup"] == {}
    assert set(report["unavailable"]) == {"torch", "onnx"}
    assert "export failed" in report["unavailable"]["onnx"]
    runs = report["runs"]["relmem"]
    weights = "fp16" if load_encoder("minilm").half_weights else "fp32"
    assert len(runs) == 2 and runs[0]["implementation"] == f"relmem minilm ({weights} weights)"
    for size in ("short", "medium"):
        for batch in ("1", "4"):
            measured = sorted(run["texts_per_s"][size][batch] for run in runs)
            assert report["texts_per_s"]["relmem"][size][batch] == pytest.approx(sum(measured) / 2)
