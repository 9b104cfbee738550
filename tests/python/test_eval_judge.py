"""The LLM judge of `relmem eval judge`: what it shows the judge, the verdicts it records, refusals judged without a
call, resuming, one judge per file, and the report's judged accuracy."""
import json
import subprocess
import sys

import pytest

from relmem import Error
from relmem.eval import Item, Part, report
from relmem.eval.judge import judge_run, load_judgements, reference
from relmem.eval.report import markdown
from relmem.llm import CallableLLM

ITEMS = [
    Item("single-1", "single", "How many singers are there?", {"type": "rows"},
         [Part("How many singers are there?", "singers", "SELECT count(*) FROM singer", [[6]])]),
    Item("single-2", "single", "Name the French singers.", {"type": "rows"},
         [Part("Name the French singers.", "singers", "SELECT name FROM singer", [["Ann"], ["Luc"]])]),
    Item("zero-1", "zero", "Where is the Eiffel Tower?", {"type": "text", "accepted": ["Paris"]}),
    Item("zero-2", "zero", "Cold milk goes in? A) fridge B) oven", {"type": "choice",
                                                                   "choices": {"A": "fridge", "B": "oven"},
                                                                   "key": "A"}),
]
ANSWERS = {"single-1": "There are six singers.", "single-2": "could not answer: the query failed",
           "zero-1": "Paris", "zero-2": "B"}


def write_run(path, label="relmem"):
    with open(path, "w", encoding="utf-8") as f:
        for item in ITEMS:
            f.write(json.dumps({"id": item.id, "kind": item.kind, "run": {"label": label}, "item": item.to_dict(),
                                "answer": ANSWERS[item.id], "results": [], "seconds": 1.0, "tokens": {}}) + "\n")
    return str(path)


class Judge:
    """Says YES when the reference's first value appears in the answer (as a word or a digit)."""

    def __init__(self):
        self.prompts = []

    def __call__(self, messages, **params):
        text = messages[-1]["content"]
        self.prompts.append(text)
        answer = text.split("Answer to grade:\n", 1)[1]
        verdict = ("six" in answer or "Paris" in answer) and "fridge" not in text
        return f"Reasoning: compared with the reference\nAnswer: ({'YES' if verdict else 'NO'})"


def test_reference_states_the_gold_of_each_answer_type():
    assert "6" in reference(ITEMS[0]) and "exactly these records" in reference(ITEMS[0])
    assert reference(ITEMS[2]) == "Any of these answers is correct: Paris"
    assert reference(ITEMS[3]) == "The correct choice is (A) fridge."
    many = Item("single-9", "single", "q", {"type": "rows"}, [Part("q", "d", "s", [[i] for i in range(25)])])
    assert "... 5 more rows" in reference(many) and "\n19" in reference(many) and "\n20" not in reference(many)


def test_judge_records_verdicts_and_skips_refusals(tmp_path):
    judge = Judge()
    out = str(tmp_path / "judged.jsonl")
    summary = judge_run(CallableLLM(judge, name="judge"), write_run(tmp_path / "run.jsonl"), out, "judge")
    assert summary == {"judged": 4, "kept": 0, "correct": 2}
    assert len(judge.prompts) == 3  # the refusal is judged wrong without a call
    found = load_judgements(out)
    assert {key[1]: j["correct"] for key, j in found.items()} == {
        "single-1": True, "single-2": False, "zero-1": True, "zero-2": False}
    assert found[("relmem", "single-2")]["reasoning"] == "no answer given"
    assert found[("relmem", "single-1")]["tokens"]["calls"] == 1


def test_judge_resumes_and_refuses_another_judge(tmp_path):
    run = write_run(tmp_path / "run.jsonl")
    out = str(tmp_path / "judged.jsonl")
    judge_run(CallableLLM(Judge(), name="judge"), run, out, "judge")
    again = Judge()
    assert judge_run(CallableLLM(again, name="judge"), run, out, "judge")["judged"] == 0 and not again.prompts
    with pytest.raises(Error, match="another judge"):
        judge_run(CallableLLM(Judge(), name="judge"), run, out, "other judge")


def test_malformed_verdicts_count_as_wrong(tmp_path):
    out = str(tmp_path / "judged.jsonl")
    judge_run(CallableLLM(lambda messages, **_: "maybe", name="judge"), write_run(tmp_path / "run.jsonl"), out, "j")
    judgements = load_judgements(out).values()
    assert not any(j["correct"] for j in judgements)
    assert any(j["reasoning"].startswith("judge failed") for j in judgements)


def test_report_shows_judged_accuracy_and_names_the_judge(tmp_path):
    run = write_run(tmp_path / "run.jsonl")
    out = str(tmp_path / "judged.jsonl")
    judge_run(CallableLLM(Judge(), name="judge"), run, out, "Tiny Judge (Q4)")
    result = report([run], [out])
    assert result["runs"][0]["judge"] == "Tiny Judge (Q4)"
    assert result["runs"][0]["groups"]["zero"]["judged_accuracy"] == 0.5
    assert result["runs"][0]["groups"]["single"]["judged_accuracy"] == 0.5
    assert "LLM judge (Tiny Judge (Q4))" in markdown(result)
    assert report([run])["runs"][0]["groups"]["all"]["judged_accuracy"] is None


def test_cli_refuses_judging_into_the_run_it_reads(tmp_path):
    run = write_run(tmp_path / "run.jsonl")
    done = subprocess.run([sys.executable, "-m", "relmem.cli", "eval", "judge", run, "--out", run, "--no-llm"],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "--out" in done.stderr
