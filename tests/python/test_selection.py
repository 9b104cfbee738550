"""The selection memory and relevance trainer from Python, on the demo collection with the hashing encoder."""
import json

import numpy as np
import pytest

import relmem
from relmem.demo.collection import DESCRIPTIONS
from relmem.demo.job import QUESTIONS

ANSWERABLE = [(q, db) for q, db in QUESTIONS if db]


@pytest.fixture(scope="module")
def catalog(demo_dir):
    return relmem.Catalog(str(demo_dir))


@pytest.fixture(scope="module")
def memory(catalog):
    return relmem.SelectionMemory.build(catalog, encoder="hashing", descriptions=DESCRIPTIONS)


def test_select_ranks_the_answering_database_first(memory):
    for question, db in ANSWERABLE:
        top = memory.select(question, 3)
        assert len(top) == 3
        assert top[0].database == db, question
        assert top[0].score >= top[1].score >= top[2].score
        assert all(0.0 <= m.probability <= 1.0 for m in top)


def test_select_set_holds_the_best_database(memory):
    for question, db in ANSWERABLE:
        assert db in [m.database for m in memory.select_set(question)]


def test_add_remove_and_save_load(tmp_path, catalog, memory):
    question = ANSWERABLE[0][0]
    before = [(m.database, round(m.score, 5)) for m in memory.select(question, 7)]
    memory.remove("restaurants")
    assert "restaurants" not in memory and len(memory) == 6
    assert "restaurants" not in [m.database for m in memory.select(question, 7)]
    memory.add(catalog, "restaurants", DESCRIPTIONS["restaurants"])
    assert [(m.database, round(m.score, 5)) for m in memory.select(question, 7)] == before
    memory.save(str(tmp_path / "selection"))
    loaded = relmem.SelectionMemory.load(str(tmp_path / "selection"))
    assert [(m.database, round(m.score, 5)) for m in loaded.select(question, 7)] == before


def test_similarities_are_what_the_untrained_score_reads(memory):
    # The untrained score (similarity_fusion.hpp) from the raw similarities that similarities() returns equals
    # select()'s score: training reads its features through this same call.
    question = ANSWERABLE[0][0]
    assert len(relmem._relmem.question_parts(question)) == 1
    (databases, raw), = memory.similarities([question])
    assert sorted(databases) == memory.databases and set(raw) == {
        "card", "table", "lexical_card", "lexical_table", "column", "value", "word_column", "lexical_table_coverage",
        "table_word_column", "word_lead", "question_form", "hubness"}
    assert tuple(raw) == relmem.SelectionMemory.raw_fields
    assert all(len(values) == len(databases) for values in raw.values())
    # Hubness is the database's, centered on the collection (every database is a candidate here).
    assert abs(float(np.sum(raw["hubness"]))) < 1e-4 and float(np.max(np.abs(raw["hubness"]))) > 0
    fused = {db: 0.2 * raw["card"][i] + 0.1 * raw["table"][i] + 0.625 * raw["lexical_card"][i]
             + 0.25 * raw["lexical_table"][i]
             + 0.2 * raw["lexical_table_coverage"][i] + 0.2 * raw["column"][i] + 0.01 * raw["value"][i]
             + 0.4 * raw["word_column"][i] + 0.25 * raw["table_word_column"][i] + 0.3 * raw["question_form"][i]
             - 0.4 * raw["hubness"][i]
             for i, db in enumerate(databases)}
    weights = relmem.SelectionMemory.untrained_weights
    for match in memory.select(question, 3):
        assert match.score == pytest.approx(fused[match.database], abs=1e-5)
        i = databases.index(match.database)
        assert match.score == pytest.approx(sum(w * raw[name][i] for name, w in weights.items()), abs=1e-5)


def test_stored_vectors_rebuild_the_same_memory(memory):
    copy = relmem.SelectionMemory(encoder="hashing")
    for name in memory.databases:
        copy.add_vectors(name, **memory.vectors(name))
    stored = memory.vectors("restaurants")
    assert stored["table_vectors"].shape == (len(memory.tables("restaurants")), memory.encoder.dim)
    assert stored["column_vectors"].shape[0] > 0 and stored["values"] == sorted(set(stored["values"]))
    forms = stored["form_vectors"]
    assert forms.shape[0] > len(memory.tables("restaurants")) and forms.shape[1] == memory.encoder.dim  # 1+ a table
    # int8 rows stored again round again: each int8 cosine moves by well under 1e-3, and the score weighs them by
    # 1.25 in all (best table 0.1, best column 0.2, best question form 0.3, word-column means 0.4 + 0.25): scores
    # within 2e-3
    for question, _ in ANSWERABLE:
        want, got = memory.select(question, 3), copy.select(question, 3)
        assert [m.database for m in got] == [m.database for m in want]
        assert [m.score for m in got] == pytest.approx([m.score for m in want], abs=2e-3)
    with pytest.raises(relmem.Error, match="unknown database"):
        memory.vectors("nowhere")


def test_stored_values_and_column_vectors(catalog):
    plain = relmem.SelectionMemory.build(catalog, encoder="hashing", samples_per_column=0, values_per_column=0)
    valued = relmem.SelectionMemory.build(catalog, encoder="hashing", samples_per_column=0)
    question = "Which restaurants are in Los Angeles?"
    scores = {m.database: m.score for m in plain.select(question, 7)}
    boosted = {m.database: m.score for m in valued.select(question, 7)}
    gained = [db for db in scores if boosted[db] > scores[db] + 1e-6]
    assert "world_cities" in gained  # it stores 'Los Angeles'
    assert "restaurants" not in gained  # it stores 'LA': mapping that is the value memory's job
    assert all(boosted[db] >= scores[db] - 1e-6 for db in scores)

    encoder = relmem.load_encoder("hashing")
    memory = relmem.SelectionMemory(encoder="hashing", lexical_encoder="")
    card, table, columns = encoder.encode(["database clinic"]), encoder.encode(["clinic"]), \
        encoder.encode(["clinic doctor", "doctor specialty"])
    memory.add_vectors("clinic", card[0], ["clinic"], table, column_vectors=columns, values=["Mercy General"])
    memory.add_vectors("other", card[0], ["clinic"], table)
    top = memory.select("doctor specialty at Mercy General", 2)
    assert top[0].database == "clinic" and top[0].score > top[1].score
    with pytest.raises(relmem.Error):
        memory.add_vectors("bad", card[0], [], column_vectors=columns[:, :5])


def test_options_are_keywords_kept_by_save_and_load(tmp_path, catalog):
    defaults = relmem.SelectionMemory.option_defaults
    assert relmem.SelectionMemory(encoder="hashing").options == defaults
    chosen = {"samples_per_column": 1, "max_value_chars": 20, "fusion": "max", "candidates": 50, "pool": 60,
              "values_per_column": 5, "column_dtype": "fp16", "table_dtype": "fp32", "synonyms": False,
              "split_sentences": False}
    assert set(chosen) == set(defaults) - {"lexical_encoder", "device"}
    memory = relmem.SelectionMemory.build(catalog, encoder="hashing", lexical_encoder="", **chosen)
    assert memory.options == {**defaults, **chosen, "lexical_encoder": ""}
    memory.save(str(tmp_path / "selection"))
    assert relmem.SelectionMemory.load(str(tmp_path / "selection")).options == memory.options
    # A manifest written before an option existed reads as the memory was built then; one lacking an option every
    # manifest has is malformed.
    path = tmp_path / "selection" / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["options"]["synonyms"], manifest["options"]["pool"]
    path.write_text(json.dumps(manifest))
    older = relmem.SelectionMemory.load(str(tmp_path / "selection")).options
    assert older == {**memory.options, "synonyms": False, "pool": max(defaults["pool"], chosen["candidates"])}
    del manifest["options"]["candidates"]
    path.write_text(json.dumps(manifest))
    with pytest.raises(relmem.Error, match="options lack 'candidates'"):
        relmem.SelectionMemory.load(str(tmp_path / "selection"))
    with pytest.raises(TypeError, match="unexpected keyword argument 'split_sentence'.*split_sentences"):
        relmem.SelectionMemory(encoder="hashing", split_sentence=False)
    with pytest.raises(TypeError, match="option 'pool' takes int, not str"):
        relmem.SelectionMemory.build(catalog, encoder="hashing", pool="many")


def test_bad_inputs_are_clear_errors(tmp_path, catalog):
    with pytest.raises(relmem.Error):
        relmem.SelectionMemory.load(str(tmp_path / "missing"))
    with pytest.raises(relmem.Error):
        relmem.SelectionMemory.build(catalog, encoder="hashing", model=str(tmp_path / "missing.model"))
    bad = tmp_path / "bad.model"
    bad.write_bytes(b"not a model")
    with pytest.raises(relmem.Error):
        relmem.RelevanceModel.load(str(bad))


def _training_questions(catalog):
    """Questions per database made from its tables and columns, enough for a short training run."""
    questions, databases = [], []
    for db in catalog.databases:
        for table in catalog.schema(db).tables:
            for column in table.columns:
                questions.append(f"What is the {column.name.replace('_', ' ')} of each {table.name}?")
                databases.append(db)
    return questions, databases


def test_train_relevance_writes_a_model_the_memory_loads(tmp_path, catalog):
    questions, databases = _training_questions(catalog)
    epochs = []
    model, report = relmem.train_relevance(
        catalog, questions, databases, encoder="hashing", epochs=2, batch=8, heldout=0.3, projection_dim=32,
        hidden=8, listwise=1.0, seed=1, threads=1, progress=epochs.append)
    assert [e["epoch"] for e in epochs] == [1, 2] == [e["epoch"] for e in report["epochs"]]
    assert all(e["loss"] > 0 for e in epochs)
    assert report["heldout_databases"] and 1 <= report["best_epoch"] <= 2
    path = tmp_path / "relevance.model"
    model.save(str(path))
    trained = relmem.SelectionMemory.build(catalog, encoder="hashing", model=str(path), descriptions=DESCRIPTIONS)
    top = trained.select(ANSWERABLE[0][0], 3)
    assert len(top) == 3 and all(0.0 <= m.probability <= 1.0 for m in top)


def test_train_relevance_ranking_objective_alone(catalog):
    # bce=0 with a listwise term: each question's positives against the untrained top hard_pool wrong databases.
    questions, databases = _training_questions(catalog)
    model, report = relmem.train_relevance(
        catalog, questions, databases, encoder="hashing", epochs=1, batch=8, heldout=0.3, projection_dim=8,
        hidden=1, listwise=1.0, bce=0.0, hard_pool=2, hard_fraction=1.0, seed=1, threads=1)
    assert model.training_info["bce_weight"] == 0 and model.training_info["hard_pool"] == 2
    assert model.config.scalar_features == 35
    assert report["epochs"][0]["loss"] > 0
    with pytest.raises(relmem.Error, match="BCE or the listwise weight"):
        relmem.train_relevance(catalog, questions, databases, encoder="hashing", epochs=1, bce=0.0)


def test_train_relevance_refuses_unknown_options(catalog):
    questions, databases = _training_questions(catalog)
    with pytest.raises(relmem.Error, match="unknown option 'epoch'"):
        relmem.train_relevance(catalog, questions, databases, encoder="hashing", epoch=2)
    with pytest.raises(relmem.Error, match="bad value for option 'epochs'"):
        relmem.train_relevance(catalog, questions, databases, encoder="hashing", epochs="two")


def test_likelihood_calibration_sets_the_threshold_at_one_half(catalog):
    memory = relmem.SelectionMemory.build(catalog, encoder="hashing", descriptions=DESCRIPTIONS)
    questions, dbs = [q for q, _ in ANSWERABLE], [db for _, db in ANSWERABLE]
    memory.calibrate(questions, dbs, objective="f1")
    f1_fit = memory.calibration
    memory.calibrate(questions, dbs, objective="likelihood")
    fit = memory.calibration
    assert fit.fitted and fit.threshold == 0.5
    assert (fit.scale, fit.bias) == pytest.approx((f1_fit.scale, f1_fit.bias))  # the same logistic regression
    with pytest.raises(relmem.Error, match="objective"):
        memory.calibrate(questions, dbs, objective="accuracy")


def test_an_untrained_memory_has_its_encoders_calibration(catalog):
    minilm = relmem.SelectionMemory.untrained_calibration("minilm")
    use_lite = relmem.SelectionMemory.untrained_calibration()
    assert (minilm.scale, minilm.lead, minilm.bias) != (use_lite.scale, use_lite.lead, use_lite.bias)
    memory = relmem.SelectionMemory.build(catalog, encoder="hashing", descriptions=DESCRIPTIONS)
    assert (memory.calibration.scale, memory.calibration.bias) == (use_lite.scale, use_lite.bias)  # no fit of its own
    if relmem.encoders.installed_model_dir("minilm"):
        memory = relmem.SelectionMemory.build(catalog, encoder="minilm", descriptions=DESCRIPTIONS)
        assert (memory.calibration.scale, memory.calibration.lead, memory.calibration.bias) == \
            (minilm.scale, minilm.lead, minilm.bias)


def test_select_set_may_select_none(catalog):
    memory = relmem.SelectionMemory.build(catalog, encoder="hashing", descriptions=DESCRIPTIONS)
    question = ANSWERABLE[0][0]
    memory.calibration = relmem.SelectionCalibration(1.0, -100.0, 0.5)  # every probability ~0
    assert memory.select_set(question, at_least_one=False) == []
    assert memory.select_set_batch([question], at_least_one=False) == [[]]
    assert memory.select_set_parts([question], at_least_one=False) == []
    assert [m.database for m in memory.select_set(question)] == [ANSWERABLE[0][1]]
    memory.calibration = relmem.SelectionCalibration(1.0, 100.0, 0.5)  # every probability ~1
    assert len(memory.select_set(question, at_least_one=False)) == len(memory)


def test_calibration_with_leads_and_questions_no_database_answers(catalog, tmp_path):
    memory = relmem.SelectionMemory.build(catalog, encoder="hashing", descriptions=DESCRIPTIONS)
    questions, dbs = [q for q, _ in ANSWERABLE], [db for _, db in ANSWERABLE]
    unanswerable = ["Who wrote the play Hamlet?", "What is the boiling point of water?", "Why is the sky blue?"]
    memory.calibrate(questions + unanswerable, dbs + [[]] * len(unanswerable), objective="likelihood", lead=True)
    assert not memory.calibration.gated
    memory.calibrate(questions + unanswerable, dbs + [[]] * len(unanswerable), objective="likelihood", lead=True,
                     gate=True)
    fit = memory.calibration
    assert fit.fitted and fit.threshold == 0.5 and fit.lead != 0.0 and fit.gated
    # The probability is the gate of the ranking's best score times the fitted logistic of the score and of the
    # lead over the best other candidate.
    ranking = memory.select(questions[0], len(memory))
    lead = ranking[0].score - ranking[1].score
    answered = 1 / (1 + np.exp(-(fit.gate_scale * ranking[0].score + fit.gate_bias)))
    expected = answered / (1 + np.exp(-(fit.scale * ranking[0].score + fit.lead * lead + fit.bias)))
    assert ranking[0].probability == pytest.approx(expected, rel=1e-4)
    memory.save(str(tmp_path / "memory"))
    loaded = relmem.SelectionMemory.load(str(tmp_path / "memory")).calibration
    assert (loaded.lead, loaded.gated, loaded.gate_scale, loaded.gate_bias) == \
        pytest.approx((fit.lead, True, fit.gate_scale, fit.gate_bias))
    with pytest.raises(relmem.Error, match="questions no database answers"):
        memory.calibrate(questions, dbs, gate=True)
    memory.calibrate(questions, dbs, objective="likelihood")
    assert memory.calibration.lead == 0.0 and not memory.calibration.gated
    memory.calibration = relmem.SelectionCalibration(1.0, 0.0, 0.5, lead=2.0, gate_scale=3.0, gate_bias=-1.0)
    assert memory.calibration.lead == 2.0 and memory.calibration.gated and memory.calibration.gate_scale == 3.0
    with pytest.raises(relmem.Error, match="finite"):
        memory.calibration = relmem.SelectionCalibration(1.0, 0.0, 0.5, lead=float("nan"))
    with pytest.raises(relmem.Error, match="finite"):
        memory.calibration = relmem.SelectionCalibration(1.0, 0.0, 0.5, gate_scale=float("inf"), gate_bias=0.0)
    with pytest.raises(relmem.Error, match="both"):
        relmem.SelectionCalibration(1.0, 0.0, 0.5, gate_scale=1.0)
