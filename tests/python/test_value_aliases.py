"""The value memory by meaning and as a memory that learns: channels in lookups, aliases through the API, from an
accepted LLM correction and through `relmem values aliases`, and the semantic benchmark category."""
import json

import pytest

import relmem
from relmem import cli
from relmem.bench import values as bench_values
from relmem.values import ValueMemory, lexicon_info

from conftest import SPIDER, load_script, requires_shared

needs_lexicon = pytest.mark.skipif(bool(lexicon_info()["missing_sources"]),
                                   reason="iso-codes, wordnet-base or data/values missing")


@pytest.fixture()
def demo(tmp_path):
    from relmem.demo.collection import build_collection
    folder = tmp_path / "dbs"
    build_collection(str(folder))
    catalog = relmem.Catalog(str(folder))
    return catalog, ValueMemory.build(catalog, relmem.HashingEncoder(256), progress=False)


@needs_lexicon
def test_lookup_by_meaning_says_why(demo):
    _, memory = demo
    found = memory.lookup("singers", "singer", "country", "French", k=3)
    assert (found[0].value, found[0].channel) == ("France", "country")
    found = memory.lookup("singers", "singer", "gender", "women", k=3)
    assert (found[0].value, found[0].channel) == ("F", "gender")
    assert "channel=country" in repr(memory.lookup("singers", "singer", "country", "American", k=1)[0])


def test_alias_is_found_first_and_survives_save_load(demo, tmp_path):
    catalog, memory = demo
    assert memory.lookup("restaurants", "restaurant", "city", "Big Apple", k=1)[0].channel != "alias"
    alias = memory.add_alias("restaurants", "restaurant", "city", "Big Apple", "NYC", evidence="a user said so")
    assert (alias.written, alias.stored, alias.source, alias.uses) == ("Big Apple", "NYC", "user", 1)
    top = memory.lookup("restaurants", "restaurant", "city", "big apple", k=1)[0]
    assert (top.value, top.channel) == ("NYC", "alias")
    corrected = memory.correct_values("SELECT name FROM restaurant WHERE city = 'Big Apple'", "restaurants", catalog)
    assert corrected.sql.endswith("city = 'NYC'") and corrected.replacements[0].channel == "alias"

    memory.save(tmp_path / "memory")
    loaded = ValueMemory.load(tmp_path / "memory", memory.encoder)
    assert [(a.written, a.stored) for a in loaded.aliases()] == [("Big Apple", "NYC")]
    assert loaded.lookup("restaurants", "restaurant", "city", "Big Apple", k=1)[0].value == "NYC"
    assert loaded.remove_alias("restaurants", "restaurant", "city", "BIG APPLE")
    assert not loaded.remove_alias("restaurants", "restaurant", "city", "Big Apple")
    with pytest.raises(relmem.Error, match="not a stored value"):
        memory.add_alias("restaurants", "restaurant", "city", "Gotham", "Gotham City")


def test_learns_from_an_accepted_correction(demo):
    catalog, memory = demo
    before = "SELECT name FROM restaurant WHERE city = 'Tinseltown' AND name != 'x'"
    after = "SELECT name FROM restaurant WHERE city = 'LA' AND name != 'x'"
    learned = memory.learn_from_correction("restaurants", catalog, before, after, evidence="question")
    assert [(a.column, a.written, a.stored, a.source) for a in learned] == [
        ("city", "Tinseltown", "LA", "llm_correction")]
    assert memory.lookup("restaurants", "restaurant", "city", "Tinseltown", k=1)[0].channel == "alias"
    # A later question that writes it links it: the planning prompt shows the stored value.
    links = memory.link("restaurants", "Which Italian places in Tinseltown are rated above 4?")
    assert ("Tinseltown", "LA", "city", "alias") in [(l.span, l.value, l.column, l.channel) for l in links]
    # Nothing to learn when the literal was already stored, or the new one is not.
    assert memory.learn_from_correction("restaurants", catalog, after, before) == []


def test_values_aliases_cli(demo, tmp_path, capsys):
    _, memory = demo
    folder = tmp_path / "index"
    memory.save(folder / "values")
    args = ["--memory", str(folder), "--db", "restaurants", "--table", "restaurant", "--column", "city"]
    assert cli.main(["values", "aliases", "add", *args, "--written", "Frisco", "--stored", "SF"]) == 0
    assert cli.main(["values", "aliases", "list", "--memory", str(folder), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert [(a["written"], a["stored"], a["source"]) for a in listed] == [("Frisco", "SF", "user")]
    assert ValueMemory.load(folder / "values").lookup("restaurants", "restaurant", "city", "Frisco")[0].value == "SF"
    assert cli.main(["values", "aliases", "remove", *args, "--written", "frisco"]) == 0
    assert cli.main(["values", "aliases", "remove", *args, "--written", "frisco"]) == 1
    assert cli.main(["values", "aliases", "add", *args, "--written", "x", "--stored", "Nowhere"]) == 2
    assert cli.main(["values", "aliases", "list", "--memory", str(tmp_path / "none")]) == 2
    assert "no value memory" in capsys.readouterr().err


def test_corrupt_alias_file_is_a_clear_error(demo, tmp_path):
    _, memory = demo
    memory.save(tmp_path / "memory")
    (tmp_path / "memory" / "aliases.json").write_text("{broken")
    with pytest.raises(relmem.Error, match="aliases.json"):
        ValueMemory.load(tmp_path / "memory", memory.encoder)


@requires_shared(SPIDER)
@needs_lexicon
def test_semantic_cases_come_from_train_and_are_found():
    maker = load_script("make_value_cases")
    databases = SPIDER / "database"
    names = ("allergy_1", "store_1", "wedding", "concert_singer")
    catalog = relmem.Catalog([str(databases / name / f"{name}.sqlite") for name in names])
    cases = maker.make_cases(catalog, str(SPIDER), per_category=0, categories=["semantic", "absent"])
    semantic = [c for c in cases if c["category"] == "semantic"]
    assert semantic and {c["split"] for c in semantic} == {"train"}
    memory = ValueMemory.build(catalog, relmem.HashingEncoder(256), progress=False)
    out = bench_values.report(bench_values.evaluate(memory, catalog, cases))
    assert out["by_category"]["semantic"]["recall@1"] >= 0.9
    assert out["by_category"]["semantic"]["ex_after"] >= 0.85
