"""What the stages declare they read and write, how the pipeline checks it, and what each SQL text costs: one
execution and one value check, reused by every later stage. The LLM is relmem.llm.ScriptedLLM (scripted replies,
not a model)."""
import itertools
from collections import Counter

import pytest
from pipeline_fixtures import catalog, memories, plan, sql_block  # noqa: F401 (fixtures)

import relmem
from relmem.agent import SWITCHES, Pipeline, Stage, State
from relmem.agent.pipeline import LEARNT
from relmem.llm import ScriptedLLM, ScriptRule
from relmem.values import ValueMemory

LA_QUESTION = "What is the average rating of Italian restaurants in Los Angeles?"
LA_SQL = "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'Los Angeles'"
LA_FIXED = "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'LA'"


def count_calls(monkeypatch, cls, method, sql_position):
    """Counts calls of cls.method by their SQL argument (positional `sql_position` after self)."""
    calls, original = Counter(), getattr(cls, method)

    def counted(self, *args, **kwargs):
        calls[args[sql_position]] += 1
        return original(self, *args, **kwargs)
    monkeypatch.setattr(cls, method, counted)
    return calls


def every_configuration():
    for size in range(len(SWITCHES) + 1):
        yield from (set(off) for off in itertools.combinations(SWITCHES, size))


def test_every_default_configuration_reads_only_what_is_written_before(catalog, memories):
    llm = ScriptedLLM([])
    for off in every_configuration():  # Pipeline() checks the data flow; any problem raises here
        pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, memories.examples,
                                    disable=off)
        assert all(stage.writes for stage in pipeline.stages), off
    assert Pipeline.default(catalog, None, memories.selection, memories.values).names == [
        "select_databases", "link_question_values", "no_llm"]


def test_reading_what_no_earlier_stage_writes_is_refused_with_the_writers(catalog, memories):
    full = Pipeline.default(catalog, ScriptedLLM([]), memories.selection, memories.values)
    with pytest.raises(relmem.Error, match=r"stage correct_values reads targets.value_checks, which no earlier stage "
                                           r"writes \(postprocess_values, refine, learn_values write it later\)"):
        full.without("link_values")
    with pytest.raises(relmem.Error, match="stage self_correct reads targets.result, which no earlier stage writes"):
        full.without("refine", "execute")
    assert "refine" not in full.without("refine").names  # the docstring's example does what it says

    class Typo(Stage):
        name = "typo"
        reads = ("candidate",)
        writes = ("answer",)

    with pytest.raises(relmem.Error, match="stage typo declares unknown state field.*candidate"):
        Pipeline([Typo()])
    with pytest.raises(relmem.Error, match="needs a name of its own"):
        Pipeline([full.stage("select_databases"), full.stage("select_databases")])


def test_without_refuses_names_it_does_not_have(catalog, memories):
    pipeline = Pipeline.default(catalog, ScriptedLLM([]), memories.selection, memories.values)
    with pytest.raises(relmem.Error, match=r"no stage or switch 'inspect' in this pipeline \(its stages: rephrase, "
                                           r"context_switch, .*; its switches: conversation, context_switch, "):
        pipeline.without("inspect")
    with pytest.raises(relmem.Error, match="unknown stage switch.*known: context_switch"):
        Pipeline.default(catalog, None, memories.selection, disable={"refine"})


def snapshot(state):
    """Every State field, and each target's fields, as comparable values."""
    fields = {name: repr(getattr(state, name)) for name in state.__dataclass_fields__
              if name not in ("targets", "trace")}
    fields["targets"] = len(state.targets)
    for target in state.targets:
        for name in target.__dataclass_fields__:
            value = getattr(target, name)
            field = next((view for view, stored in LEARNT.items() if stored == name), name)
            fields[(target.index, field)] = repr(sorted(value)) if isinstance(value, dict) else repr(value)
    return fields


def changed_fields(before, after):
    changed = set()
    for key in set(before) | set(after):
        if not isinstance(key, str) and key not in before:
            continue  # a target made by this stage: "targets" changed
        if before.get(key) != after.get(key):
            changed.add(key if isinstance(key, str) else f"targets.{key[1]}")
    return changed


def declares(stage, field):
    if field == "targets.revisions":  # QueryTarget.revise() keeps the history of every SQL it writes
        field = "targets.sql"
    return field in stage.writes or (field.startswith("targets.") and "targets" in stage.writes
                                     and field.partition(".")[2] not in LEARNT)


def run_watched(pipeline, question):
    """Runs the pipeline stage by stage; returns the state and {stage: fields it changed}."""
    state = State(question)
    changes = {}
    for stage in pipeline.stages:
        if state.stopped:
            break
        before = snapshot(state)
        stage.run(state)
        changes[stage.name] = changed_fields(before, snapshot(state)) - {"answer", "stopped"}
    return state, changes


SCRIPTS = {
    "value corrected by the LLM": (LA_QUESTION, [
        ScriptRule(stage="context_switch", reply="Answer: (YES)"),
        ScriptRule(stage="plan", reply=plan(("the average", LA_SQL, "restaurants"))),
        ScriptRule(stage="correct_values", contains="'LA'", reply=sql_block(LA_FIXED)),
        ScriptRule(stage="return_type", reply="(TEXT)"), ScriptRule(stage="generate_output", reply="Answer: 4.2")]),
    "refined, then repaired": ("List the names of the singers from Japan.", [
        ScriptRule(stage="context_switch", reply="Answer: (YES)"),
        ScriptRule(stage="plan", reply=plan(("names", "SELECT name FROM singer WHERE country = 'Japn'", "singers"))),
        ScriptRule(stage="refine", reply=sql_block("SELECT nme FROM singer WHERE country = 'Japan'")),
        ScriptRule(stage="self_correct", reply=sql_block("SELECT name FROM singer WHERE country = 'Japan'")),
        ScriptRule(stage="return_type", reply="(SQL)")]),
    "answered without data": ("What is 2 + 2?", [
        ScriptRule(stage="context_switch", reply="Answer: (NO)"), ScriptRule(stage="answer_directly", reply="Answer: 4")]),
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_stages_change_only_what_they_declare_and_call_the_llm_by_their_own_names(catalog, memories, script):
    question, rules = SCRIPTS[script]
    llm = ScriptedLLM(rules)
    pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, disable={"value_memory"}
                                if script == "refined, then repaired" else ())
    state, changes = run_watched(pipeline, question)
    assert state.stopped and not state.answer.startswith("could not answer"), state.answer
    for stage in pipeline.stages:
        undeclared = {field for field in changes.get(stage.name, ()) if not declares(stage, field)}
        assert not undeclared, f"{stage.name} changed {undeclared} but writes only {stage.writes}"
    assert set(llm.stages()) <= set(pipeline.names)
    assert all(call["stage"] == record["stage"] for record in state.trace for call in record["llm_calls"])


def test_each_sql_text_is_executed_and_checked_once(catalog, memories, monkeypatch):
    executed = count_calls(monkeypatch, relmem.Catalog, "execute", 1)
    checked = count_calls(monkeypatch, ValueMemory, "check_values", 0)
    llm = ScriptedLLM(SCRIPTS["value corrected by the LLM"][1])
    pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, config={"refine_rounds": 2})
    state = pipeline.ask(LA_QUESTION)
    assert state.answer == "4.2" and state.results()[0]["sql"] == LA_FIXED
    assert executed == Counter({LA_FIXED: 1})  # inspected, then executed: one run
    assert checked == Counter({LA_SQL: 1, LA_FIXED: 1})  # link, post-process and inspect share them
    reused = {(r["stage"], tuple(r["decision"].get("reused", ()))) for r in state.trace if "target" in r}
    assert reused == {("repair_qualifiers", ()), ("repair_joins", ()), ("repair_counts", ()), ("link_values", ()),
                      ("correct_values", ()),
                      ("postprocess_values", ()), ("inspect", ("value_checks",)), ("execute", ("result",)),
                      ("learn_values", ("value_checks",))}
    learned = [r["decision"]["learned"] for r in state.trace if r["stage"] == "learn_values"]
    assert [[(a["written"], a["stored"]) for a in step] for step in learned] == [[("Los Angeles", "LA")]]


def test_a_revision_back_to_an_earlier_sql_reuses_its_result(catalog, memories, monkeypatch):
    broken, other = "SELECT nme FROM singer", "SELECT nmee FROM singer"
    executed = count_calls(monkeypatch, relmem.Catalog, "execute", 1)
    llm = ScriptedLLM([ScriptRule(stage="context_switch", reply="Answer: (YES)"),
                       ScriptRule(stage="plan", reply=plan(("names", broken, "singers"))),
                       ScriptRule(stage="self_correct", reply=sql_block(other), times=1),
                       ScriptRule(stage="self_correct", reply=sql_block(broken))])
    pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, config={"self_correct_retries": 3})
    state = pipeline.ask("List the singers.")
    assert executed == Counter({broken: 1, other: 1})
    repairs = [r for r in state.trace if r["stage"] == "self_correct"]
    assert [r["decision"].get("reused") for r in repairs] == [None, ["result"], None]  # the third repeats the second
    assert state.answer.startswith("could not answer: the query on singers failed (prepare: no such column: nme")


def test_scripted_llm_answers_by_rules_and_fails_clearly_without_one():
    llm = ScriptedLLM([ScriptRule(stage="plan", contains="singer", reply="singer plan", times=1),
                       ScriptRule(stage="plan", reply=lambda request: f"plan for {request.prompt}")])
    assert llm.chat("How many singers?", stage="plan").text == "singer plan"
    assert llm.chat("How many singers?", stage="plan").text == "plan for How many singers?"
    with pytest.raises(relmem.Error, match="scripted LLM: no rule answers stage 'refine'"):
        llm.chat("q", stage="refine")
    assert llm.stages() == ["plan", "plan", "refine"] and llm.requests[0].messages[0]["role"] == "user"
    metered = relmem.llm.MeteredLLM(llm)
    metered.chat("How many singers?", stage="plan")
    assert metered.ledger.by_stage()["plan"].calls == 1
