"""The pipeline's hybrid stage: planning finds no stored nationality, the LLM proposes a virtual column, relmem fills
the rows the query reaches (scripted oracle filler, not an LLM) and answers; the `hybrid` switch turns it off."""
import json
import sqlite3

import pytest

import relmem
from relmem.agent import Pipeline
from relmem.agent.stages.hybrid import parse_proposal
from relmem.eval import OracleFiller
from relmem.parsers import FormatError

DRIVERS = [(1, "Lewis", "Hamilton", "British"), (2, "Sebastian", "Vettel", "German"),
           (3, "Michael", "Schumacher", "German"), (4, "Fernando", "Alonso", "Spanish")]
PROPOSAL = {"columns": [{"table": "drivers", "name": "nationality", "type": "TEXT",
                         "meaning": "the nationality of the driver"}],
            "sql": "SELECT forename, surname FROM drivers WHERE nationality = 'German' ORDER BY driverId"}


@pytest.fixture
def formula(tmp_path):
    folder, original = tmp_path / "dbs", tmp_path / "original.sqlite"
    (folder / "f1").mkdir(parents=True)
    for path, full in ((folder / "f1" / "f1.sqlite", False), (original, True)):
        with sqlite3.connect(path) as db:
            extra = ", nationality TEXT" if full else ""
            db.execute(f"CREATE TABLE drivers (driverId INTEGER PRIMARY KEY, forename TEXT, surname TEXT{extra})")
            db.executemany(f"INSERT INTO drivers VALUES (?, ?, ?{', ?' if full else ''})",
                           [d if full else d[:3] for d in DRIVERS])
    return relmem.Catalog(str(folder)), original


class Scripted:
    """The pipeline's LLM: scripted replies per stage; fill requests go to the oracle filler."""

    def __init__(self, oracle):
        self.oracle = oracle
        self.stages = []

    def __call__(self, messages, stage="", **params):
        self.stages.append(stage)
        if stage.startswith("hybrid_"):
            return self.oracle.chat(messages, stage=stage)
        return {
            "rephrase": "Question: Which drivers are German?",
            "context_switch": "Reasoning: needs records.\nAnswer: (YES)",
            "plan": "No relevant database",
            "hybrid": "```json\n" + json.dumps(PROPOSAL) + "\n```",
            "return_type": "Answer: (SQL_RESULT)",
            "generate_output": "Answer: Sebastian Vettel and Michael Schumacher",
        }.get(stage, "")


def pipeline(catalog, llm, tmp_path, **options):
    selection = relmem.SelectionMemory.build(catalog, relmem.load_encoder("hashing"))
    config = {"hybrid_store": str(tmp_path / "fills.sqlite")}
    return Pipeline.default(catalog, llm, selection, config=config, **options)


def test_missing_facts_are_proposed_filled_and_queried(formula, tmp_path):
    catalog, original = formula
    oracle = OracleFiller([{"database": "f1", "path": str(original)}])
    ledger = relmem.llm.TokenLedger()
    llm = relmem.llm.MeteredLLM(Scripted(oracle), ledger)
    state = pipeline(catalog, llm, tmp_path, disable={"conversation"}).ask("Which drivers are German?")
    assert state.results()[0]["rows"] == [["Sebastian", "Vettel"], ["Michael", "Schumacher"]]
    record = next(r for r in state.trace.records if r["stage"] == "hybrid")
    assert record["decision"]["proposed_columns"] == PROPOSAL["columns"]
    assert record["decision"]["fill_requests"][0]["items"] == 4
    assert record["decision"]["fill_tokens"]["total_tokens"] > 0
    assert ledger.by_stage()["hybrid_fill"].calls == 1
    assert state.answer


def test_the_hybrid_switch_turns_it_off(formula, tmp_path):
    catalog, original = formula
    scripted = Scripted(OracleFiller([{"database": "f1", "path": str(original)}]))
    state = pipeline(catalog, scripted, tmp_path, disable={"hybrid", "conversation"}).ask("Which drivers are German?")
    assert "hybrid" not in [r["stage"] for r in state.trace.records]
    assert "hybrid" not in scripted.stages
    assert state.answer.startswith("could not answer")


def test_proposals_are_parsed_strictly():
    assert parse_proposal('Here: {"columns": [], "sql": ""}') == {"columns": [], "sql": ""}
    for bad in ("no json", '{"columns": [{"table": "t"}], "sql": "x"}',
                '{"columns": [{"table": "t", "name": "c", "meaning": "m", "type": "BLOB"}], "sql": "x"}'):
        with pytest.raises(FormatError):
            parse_proposal(bad)
