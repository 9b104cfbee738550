"""`relmem eval run` end to end on the demo collection with the gold simulator: every item answered, each ablation
lowering the figure it should, concurrency, and resuming after an interruption."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from fake_llm_server import FakeLLMServer, Rule
from pipeline_fixtures import catalog, memories  # noqa: F401 (fixtures)

import relmem
from relmem.eval import GoldSimulator, Item, Part, make_pipeline, markdown, report, run_items, write_set
from relmem.eval.runner import written_ids
from relmem.llm import CallableLLM, OpenAIChat

RELMEM = [sys.executable, "-m", "relmem.cli"]


def part(catalog, question, database, sql):
    result = catalog.execute(database, sql)
    assert result.ok and result.rows
    return Part(question, database, sql, [list(row) for row in result.rows], "order by" in sql.lower())


@pytest.fixture(scope="module")
def items(catalog):
    la = part(catalog, "How many restaurants are in Los Angeles?", "restaurants",
              "SELECT count(*) FROM restaurant WHERE city = 'LA'")
    chicago = part(catalog, "How many hospitals are in chicago?", "hospitals",
                   "SELECT count(*) FROM hospital WHERE city = 'Chicago'")
    france = part(catalog, "What are the names of the singers from france?", "singers",
                  "SELECT name FROM singer WHERE country = 'France'")
    budget = part(catalog, "What is the largest budget of a department?", "employees",
                  "SELECT max(budget) FROM department")
    larger = 1 if la.rows[0][0] > chicago.rows[0][0] else 2
    return [
        Item("single-1", "single", la.question, {"type": "rows"}, [la]),
        Item("single-2", "single", france.question, {"type": "rows"}, [france]),
        Item("double-1", "double", relmem.compose_question([la.question, chicago.question], "larger-number"),
             {"type": "larger", "question": larger}, [la, chicago]),
        Item("multi-1", "multi", relmem.compose_question([budget.question, chicago.question], "concatenate"),
             {"type": "parts"}, [budget, chicago]),
        Item("zero-1", "zero", "Read the passage and answer the question.\nPassage: The Eiffel Tower stands in "
                               "Paris.\nQuestion: In which city is the Eiffel Tower?",
             {"type": "text", "accepted": ["Paris"]}),
        Item("zero-2", "zero", "Where do you keep milk cold? Choose one answer: A) fridge, B) oven.",
             {"type": "choice", "choices": {"A": "fridge", "B": "oven"}, "key": "A"}),
    ]


def evaluate(tmp_path, catalog, memories, items, name, llm=None, concurrency=1, **options):
    llm = llm or CallableLLM(GoldSimulator(items), name="gold-simulator")
    pipeline = make_pipeline(catalog, memories, llm, **options)
    out = str(tmp_path / f"{name}.jsonl")
    run_items(pipeline, items, out, {"label": name, "llm": "gold-simulator"}, concurrency=concurrency,
              progress=False)
    return out


def figures(out):
    return report([out])["runs"][0]["groups"]


def read_ids(path):
    """Ids of the records written so far, read as the runner's resume reads them: a last line still being written is
    not a record yet."""
    with open(path, "rb") as f:
        return written_ids(f.read(), path)[0]


def test_the_simulator_answers_every_item_through_the_whole_pipeline(tmp_path, catalog, memories, items):
    out = evaluate(tmp_path, catalog, memories, items, "full")
    groups = figures(out)
    assert {g: m["answer_accuracy"] for g, m in groups.items()} == {
        "zero": 1.0, "single": 1.0, "double": 1.0, "multi-2": 1.0, "all": 1.0}
    assert groups["all"]["execution_accuracy"] == 1.0
    assert groups["all"]["context_switch_accuracy"] == 1.0
    assert groups["single"]["selection_after"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert groups["single"]["selection_before"]["precision"] == 0.2  # the top 5 of 7 databases
    record = json.loads(open(out, encoding="utf-8").readline())
    assert {"plan", "context_switch"} <= set(record["tokens"])
    assert all("messages" not in call for step in record["trace"] for call in step["llm_calls"])


def test_each_ablation_lowers_the_figure_it_should(tmp_path, catalog, memories, items):
    full = figures(evaluate(tmp_path, catalog, memories, items, "full"))
    no_values = figures(evaluate(tmp_path, catalog, memories, items, "no-values", disable={"value_memory"}))
    assert no_values["single"]["answer_accuracy"] == 0.0  # 'Los Angeles' is stored as 'LA', 'france' as 'France'
    no_switch = figures(evaluate(tmp_path, catalog, memories, items, "no-switch", disable={"context_switch"}))
    assert no_switch["zero"]["answer_accuracy"] == 0.0 and no_switch["single"]["answer_accuracy"] == 1.0
    assert no_switch["all"]["context_switch_accuracy"] is None
    top1 = figures(evaluate(tmp_path, catalog, memories, items, "top-1", top_k=1))
    assert top1["double"]["answer_accuracy"] == 0.0
    assert top1["double"]["selection_before"]["recall"] == 0.5
    everything = figures(evaluate(tmp_path, catalog, memories, items, "all-schemas", all_schemas=True))
    assert everything["single"]["selection_before"]["precision"] == pytest.approx(1 / 7, abs=1e-3)
    assert everything["single"]["prompt_tokens"] > full["single"]["prompt_tokens"]
    assert everything["all"]["answer_accuracy"] == 1.0


def test_report_compares_runs_and_says_when_the_simulator_answered(tmp_path, catalog, memories, items):
    outs = [evaluate(tmp_path, catalog, memories, items, "full"),
            evaluate(tmp_path, catalog, memories, items, "no-values", disable={"value_memory"})]
    text = markdown(report(outs))
    assert text.splitlines()[0].startswith("# relmem evaluation (gold simulator")
    assert "not an LLM's accuracy" in text.splitlines()[0]
    assert "| single | 2 | 1.000 | 0.000 (-1.000) |" in text
    fewer = [item for item in items if item.kind != "single"] + [next(i for i in items if i.kind == "single")]
    ranged = markdown(report(outs + [evaluate(tmp_path, catalog, memories, fewer, "fewer")]))
    assert "| single | 1–2 | 1.000 | 0.000 (-1.000) | 1.000 |" in ranged  # runs of other sizes: the range of N
    result = subprocess.run(RELMEM + ["eval", "report", *outs, "--markdown"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "(the paper's Table 3)" in result.stdout


def test_plots_are_written_for_each_metric(tmp_path, catalog, memories, items):
    pytest.importorskip("matplotlib")
    out = evaluate(tmp_path, catalog, memories, items, "full")
    result = subprocess.run(RELMEM + ["eval", "report", out, "--plots", str(tmp_path / "plots")],
                            capture_output=True, text=True, env={**os.environ, "MPLBACKEND": "Agg"})
    assert result.returncode == 0, result.stderr
    paths = json.loads(result.stdout)["plots"]
    assert len(paths) == 4 and all(os.path.getsize(p) > 1000 for p in paths)


def simulator_rule(items, delay):
    simulator = GoldSimulator(items)
    return Rule(reply=lambda request: simulator(request.messages, stage=request.stage), delay=delay)


def test_several_questions_are_in_flight_against_an_endpoint(tmp_path, catalog, memories, items):
    with FakeLLMServer([simulator_rule(items, 0.2)], lifetime=120) as server:
        llm = OpenAIChat(server.base_url, "fake-model", max_retries=0, timeout=10)
        out = evaluate(tmp_path, catalog, memories, items, "parallel", llm=llm, concurrency=4)
        arrivals = sorted(request.time for request in server.requests)
    assert figures(out)["all"]["answer_accuracy"] == 1.0
    # One question at a time, a request follows the 0.2 s answer to the previous one; here four start at once.
    assert arrivals[3] - arrivals[0] < 0.1


def test_resume_keeps_finished_items_and_reruns_a_cut_line(tmp_path, catalog, memories, items):
    simulator = CallableLLM(GoldSimulator(items), name="gold-simulator")
    pipeline = make_pipeline(catalog, memories, simulator)
    out = str(tmp_path / "run.jsonl")
    run_items(pipeline, items[:3], out, {"label": "x"}, progress=False)
    with open(out, "a", encoding="utf-8") as f:
        f.write('{"id": "multi-1", "answer": "cut sh')
    with pytest.raises(relmem.Error, match="--resume"):
        run_items(pipeline, items, out, {"label": "x"}, progress=False)
    summary = run_items(pipeline, items, out, {"label": "x"}, resume=out, concurrency=2, progress=False)
    assert summary["skipped"] == 3 and summary["done"] == 3
    assert sorted(read_ids(out)) == sorted(item.id for item in items)
    copy = str(tmp_path / "copy.jsonl")
    assert run_items(pipeline, items, copy, {"label": "x"}, resume=out, progress=False)["done"] == 0
    assert sorted(read_ids(copy)) == sorted(read_ids(out))


def test_a_killed_run_resumes_without_losing_or_repeating_items(tmp_path, catalog, memories, items, demo_dir):
    memory_dir = tmp_path / "memory"
    memories.save(str(memory_dir))
    set_path, out = str(tmp_path / "set.jsonl"), str(tmp_path / "out.jsonl")
    write_set(items, set_path)
    with FakeLLMServer([simulator_rule(items, 0.1)], lifetime=120, max_requests=2000) as server:
        command = RELMEM + ["eval", "run", "--set", set_path, "--dbs", str(demo_dir), "--memory", str(memory_dir),
                            "--llm-base-url", server.base_url, "--llm-model", "fake-model", "--out", out]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not os.path.exists(out) or len(read_ids(out)) < 2):
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        finished = read_ids(out)
        assert 2 <= len(finished) < len(items)
        resumed = subprocess.run(command + ["--resume", out], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["skipped"] == len(finished) and summary["done"] == len(items) - len(finished)
    ids = read_ids(out)
    assert sorted(ids) == sorted(item.id for item in items) and ids[:len(finished)] == finished


class CountingLocalModel:
    """Stands in for a LocalModel's statistics: each question evaluates 100 prompt tokens, reuses 900, and breaks
    one loop every second question."""

    class Stats:
        def __init__(self):
            self.questions = 0

        def to_dict(self):
            self.questions += 0.5  # read once before and once after each question
            n = int(self.questions)
            return {"calls": 2 * n, "prompt_tokens": 1000 * n, "reused_prompt_tokens": 900 * n,
                    "completion_tokens": 30 * n, "seconds": 1.5 * n, "loops_broken": n // 2}

    def __init__(self):
        self.stats = self.Stats()


def test_records_count_the_local_models_kv_cache_reuse(tmp_path, catalog, memories, items):
    pipeline = make_pipeline(catalog, memories, CallableLLM(GoldSimulator(items), name="gold-simulator"))
    out = str(tmp_path / "local.jsonl")
    run_items(pipeline, items[:2], out, {"label": "local"}, progress=False, local=CountingLocalModel())
    records = [json.loads(line) for line in open(out)]
    assert [r["local_model"]["reused_prompt_tokens"] for r in records] == [900, 900]
    assert [r["local_model"]["loops_broken"] for r in records] == [0, 1]
    assert report([out])["runs"][0]["groups"]["single"]["evaluated_prompt_tokens"] == 100
    several = str(tmp_path / "several.jsonl")
    run_items(pipeline, items[:2], several, {"label": "several"}, concurrency=2, progress=False,
              local=CountingLocalModel())
    assert not any("local_model" in json.loads(line) for line in open(several))


def test_the_context_switch_settings_reach_the_pipeline(catalog, memories, items):
    simulator = CallableLLM(GoldSimulator(items), name="gold-simulator")
    assert "context_switch" in make_pipeline(catalog, memories, simulator).names
    gate = make_pipeline(catalog, memories, simulator, context_switch="selection", switch_gate=(1.0, 1.0, 0.0)).names
    assert "selection_switch" in gate and "context_switch" not in gate
    late = make_pipeline(catalog, memories, simulator, switch_view="candidates").names
    assert late.index("select_databases") < late.index("context_switch")


@pytest.mark.parametrize("repair", ["repair_qualifiers", "repair_joins"])
def test_static_repairs_reach_the_pipeline_but_not_the_baselines(catalog, memories, items, repair):
    simulator = CallableLLM(GoldSimulator(items), name="gold-simulator")
    assert repair in make_pipeline(catalog, memories, simulator).names
    assert repair not in make_pipeline(catalog, memories, simulator, **{repair: False}).names
    for baseline in ("gold-ddl", "top20-ddl"):
        assert repair not in make_pipeline(catalog, memories, simulator, condition=baseline, items=items).names
