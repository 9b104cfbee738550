"""The calibrated replacement confidence: its features from Python, and the fit that sets its weights."""
import numpy as np
import pytest

import relmem
from relmem.values import CONFIDENCE_FEATURES, CORRECTION_DEFAULTS, ValueMemory, confidence_model, replacement_evidence

from conftest import load_script


def test_each_encoder_has_its_model_and_others_get_use_lites():
    use_lite, minilm = confidence_model("use-lite"), confidence_model("minilm")
    for model in (use_lite, minilm):
        assert len(model["weights"]) == len(CONFIDENCE_FEATURES) and 0 < model["threshold"] < 1
    assert minilm != use_lite and confidence_model("hashing:256") == use_lite
    assert CORRECTION_DEFAULTS["min_confidence"] is None  # the threshold of the memory encoder's model


def test_post_processing_uses_the_model_of_the_memorys_encoder(demo_dir):
    catalog = relmem.Catalog(str(demo_dir))
    memory = ValueMemory.build(catalog, relmem.HashingEncoder(256), progress=False)
    sql = "SELECT * FROM restaurant WHERE city = 'Los Angeles'"
    similar = memory.lookup("restaurants", "restaurant", "city", "Los Angeles", k=10)
    features, _ = replacement_evidence("Los Angeles", similar, memory.column("restaurants", "restaurant",
                                                                              "city").indexed_values)
    weights = np.array(confidence_model("use-lite")["weights"])  # the hashing encoder has no fit of its own
    expected = 1 / (1 + np.exp(-(np.array(features) @ weights)))
    assert memory.correct_values(sql, "restaurants", catalog).replacements[0].confidence == pytest.approx(expected)


def test_replacement_evidence_of_a_lookup(demo_dir):
    catalog = relmem.Catalog(str(demo_dir))
    memory = ValueMemory.build(catalog, relmem.HashingEncoder(256), progress=False)
    similar = memory.lookup("restaurants", "restaurant", "city", "Los Angeles", k=3)
    column = memory.column("restaurants", "restaurant", "city")
    features, gate = replacement_evidence("Los Angeles", similar, column.indexed_values)
    assert len(features) == len(CONFIDENCE_FEATURES) and gate == ""
    named = dict(zip(CONFIDENCE_FEATURES, features))
    assert named["abbreviation"] == 1 and named["abbreviation*score"] == similar[0].score
    fixed = memory.correct_values("SELECT * FROM restaurant WHERE city = 'Los Angeles'", "restaurants", catalog)
    assert fixed.replacements[0].confidence >= confidence_model(memory.encoder.name)["threshold"]
    assert memory.correct_values("SELECT * FROM restaurant WHERE city = 'Los Angeles'", "restaurants", catalog,
                                 min_confidence=1.01).replacements == []


def test_fit_separates_and_the_threshold_keeps_the_absent_budget():
    fit = load_script("fit_value_confidence")
    rng = np.random.default_rng(0)
    right = rng.random(400) < 0.5
    x = np.column_stack([np.ones(400), np.where(right, 1.0, -1.0) + rng.normal(0, 0.8, 400)])
    w = fit.fit_logistic(x, right.astype(float), l2=0.01)
    assert w[1] > 1  # the informative feature gets a large positive weight
    p = 1 / (1 + np.exp(-(x @ w)))
    absent = ~right
    for budget in (0.0, 0.05, 0.2):
        t = fit.pick_threshold(p, right, absent, int(absent.sum()), budget)
        assert ((p >= t) & absent).sum() <= budget * absent.sum()
    assert fit.pick_threshold(p, right, absent, int(absent.sum()), 0.2) <= fit.pick_threshold(
        p, right, absent, int(absent.sum()), 0.0)


def test_cross_validation_chooses_a_setting_within_the_absent_target():
    fit = load_script("fit_value_confidence")
    rng = np.random.default_rng(1)
    n = 600
    absent = rng.random(n) < 0.3
    right = ~absent & (rng.random(n) < 0.8)
    x = np.column_stack([np.ones(n), np.where(right, 1.0, -1.0) + rng.normal(0, 1.0, n)])
    gated = np.zeros(n, dtype=bool)
    dbs = [f"db{i % 20}" for i in range(n)]
    row_groups = np.array([fit.database_group(db, 4) for db in dbs])
    case_groups = [(bool(a), int(g)) for a, g in zip(absent, row_groups)]
    results = fit.cross_validate(x, gated, right, absent, case_groups, row_groups, 4, [0.01, 1.0], [0.0, 0.05])
    assert len(results) == 4 and all(r["absent"] == int(absent.sum()) for r in results)
    for r in results:  # every held-back case counted once, by database group
        assert 0 <= r["absent_replaced"] <= r["absent"] and r["right"] <= n
    strict = [r for r in results if r["budget"] == 0.0]
    loose = [r for r in results if r["budget"] == 0.05]
    assert sum(r["absent_replaced"] for r in strict) <= sum(r["absent_replaced"] for r in loose)
    assert all(fit.database_group(db, 4) == fit.database_group(db, 4) for db in dbs)
