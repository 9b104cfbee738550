"""The question-answering pipeline end to end on the demo databases, against the fake OpenAI-compatible server."""
import hashlib
import re
import sqlite3
from types import SimpleNamespace

import pytest
from fake_llm_server import FakeLLMServer, Rule
from pipeline_fixtures import catalog, memories, plan, sql_block  # noqa: F401 (fixtures)

import relmem
from relmem.agent import ConversationMemory, Pipeline, PipelineConfig
from relmem.llm import OpenAIChat

YES = Rule(stage="context_switch", reply="Reasoning: this needs stored records.\nAnswer: (YES)")


def query(demo_dir, db, sql):
    with sqlite3.connect(f"file:{demo_dir / db / (db + '.sqlite')}?mode=ro", uri=True) as connection:
        return connection.execute(sql).fetchall()


def default_pipeline(server, catalog, memories, **options):
    llm = OpenAIChat(server.base_url, "fake-model", max_retries=0, timeout=5)
    return Pipeline.default(catalog, llm, memories.selection, memories.values, memories.examples,
                            descriptions=memories.descriptions, **options)


def ask(server, catalog, memories, question, **options):
    pipeline = default_pipeline(server, catalog, memories, **options)
    return pipeline, pipeline.ask(question)


def records(state, stage):
    return [r for r in state.trace.records if r["stage"] == stage]


def assert_no_errors(state):
    assert [(r["stage"], r["error"]) for r in state.trace if r["error"]] == []
    assert all(call["error"] is None for r in state.trace for call in r["llm_calls"])


def test_question_answered_from_its_own_context_runs_no_sql(catalog, memories):
    question = "Our shop sold 12, 7 and 9 bikes in the last three months. What was the average per month?"
    rules = [Rule(stage="context_switch", contains="bikes", reply="Reasoning: all numbers are given.\nAnswer: (NO)"),
             Rule(stage="answer_directly", contains="sold 12, 7 and 9 bikes", reply="Answer: 9.33 bikes per month")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, question)
    assert server.stages() == ["context_switch", "answer_directly"]  # its tokens are booked to itself
    assert state.answer == "9.33 bikes per month"
    assert state.results() == [] and state.targets == []
    assert [r["stage"] for r in state.trace] == ["context_switch", "answer_directly"]
    assert records(state, "context_switch")[0]["decision"] == {"needs_databases": False}
    assert_no_errors(state)


def test_the_context_switch_can_see_only_the_selected_candidates(catalog, memories):
    question = "Our shop sold 12, 7 and 9 bikes in the last three months. What was the average per month?"
    rules = [Rule(stage="context_switch", reply="Reasoning: all numbers are given.\nAnswer: (NO)"),
             Rule(stage="answer_directly", reply="Answer: 9.33 bikes per month")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, question, config={"top_k": 1, "switch_view": "candidates"})
        prompt = server.requests[0].prompt
    assert [r["stage"] for r in state.trace] == ["select_databases", "context_switch", "answer_directly"]
    shown = [db for db in catalog.databases if f"- {db}:" in prompt]
    assert shown == [state.candidates[0].database]
    assert state.answer == "9.33 bikes per month" and state.targets == []
    with FakeLLMServer(rules) as server:
        ask(server, catalog, memories, question)
        prompt = server.requests[0].prompt
    assert all(f"- {db}:" in prompt for db in catalog.databases)  # the collection's overview


@pytest.mark.parametrize("bias, needs_data", [(-50.0, False), (50.0, True)])
def test_the_selection_gate_decides_without_the_llm(catalog, memories, bias, needs_data):
    question = "How many Italian restaurants are in Los Angeles?"
    rules = [YES, Rule(stage="answer_directly", reply="Answer: none"),
             Rule(stage="plan", reply="No relevant database"), Rule(stage="hybrid", reply='{"columns": [], "sql": ""}')]
    config = {"context_switch": "selection", "switch_gate": (0.0, 0.0, bias)}
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, question, config=config)
    assert "context_switch" not in server.stages()
    assert state.needs_data is needs_data
    assert ("answer_directly" in server.stages()) is not needs_data
    decision = records(state, "selection_switch")[0]["decision"]
    assert decision["needs_databases"] is needs_data and decision["probability"] == (1.0 if needs_data else 0.0)
    assert decision["best"] == memories.selection.select(question, 1)[0].database


def test_the_selection_gate_weighs_the_best_score_and_its_lead():
    from relmem.agent.stages.context import gate_probability
    assert gate_probability(1.2, 0.2, (2.33, 27.58, -6.57)) > 0.5 > gate_probability(0.9, 0.05, (2.33, 27.58, -6.57))
    assert gate_probability(0.0, 0.0, (0.0, 0.0, -1000.0)) == 0.0  # no overflow far out


def test_the_selection_gate_is_the_one_fitted_for_the_memory_encoder():
    from relmem.agent.config import SWITCH_GATES, fitted_switch_gate
    from relmem.agent.stages.context import SelectionSwitch
    minilm = SimpleNamespace(encoder=SimpleNamespace(name="minilm"))
    assert SelectionSwitch(minilm, PipelineConfig()).gate == SWITCH_GATES["minilm"] != SWITCH_GATES["use-lite"]
    assert SelectionSwitch(minilm, PipelineConfig(switch_gate=(1, 2, 3))).gate == (1.0, 2.0, 3.0)
    with pytest.raises(relmem.Error, match="no selection gate is fitted for encoder 'hashing:64'.*fit_switch_gate"):
        fitted_switch_gate("hashing:64")
    assert relmem.agent.measured_settings("minilm") == relmem.agent.SELECTION_LED
    assert relmem.agent.measured_settings("hashing:64") == {}


def test_a_memory_without_a_fitted_gate_needs_one_given(catalog, memories):
    llm = OpenAIChat("http://127.0.0.1:9/v1", model="unused")  # never called
    with pytest.raises(relmem.Error, match="no selection gate is fitted for encoder 'hashing"):
        Pipeline.default(catalog, llm, memories.selection, config={"context_switch": "selection"})


def test_an_unknown_switch_setting_is_refused(catalog, memories):
    with pytest.raises(relmem.Error, match="switch_view"):
        PipelineConfig(switch_view="everything")
    with pytest.raises(relmem.Error, match="context_switch"):
        PipelineConfig(context_switch="coin")
    with pytest.raises(relmem.Error, match="switch_gate"):
        PipelineConfig(switch_gate=(1.0, 2.0))


def test_a_question_no_database_holds_is_answered_without_data(catalog, memories):
    question = "Passage: The Eiffel Tower stands in Paris. Question: In which city is the Eiffel Tower?"
    rules = [Rule(stage="context_switch", reply="Reasoning: it names a place.\nAnswer: (YES)"),
             Rule(stage="plan", reply="No relevant database"),
             Rule(stage="hybrid", reply='{"columns": [], "sql": ""}'),
             Rule(stage="answer_without_data", contains="Eiffel Tower stands in Paris", reply="Answer: Paris")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, question)
    assert state.answer == "Paris" and state.targets == [] and state.needs_data is True
    assert server.stages()[-1] == "answer_without_data"
    assert records(state, "answer_without_data")[0]["decision"] == {"answer": "Paris"}


def test_a_refused_question_with_queries_is_not_answered_without_data(catalog, memories):
    question = "What is the average rating of Italian restaurants in Los Angeles?"
    rules = [Rule(stage="context_switch", reply="Answer: (YES)"),
             Rule(stage="plan", reply=plan(("ratings", "SELECT AVG(nope) FROM restaurant", "restaurants"))),
             Rule(stage="answer_without_data", reply="Answer: 4.5")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, question, disable={"self_correction", "refinement", "hybrid"})
    assert "answer_without_data" not in server.stages() and state.answer != "4.5"


LA_PLAN = plan(("average rating of Italian restaurants in Los Angeles",
                "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'Los Angeles'",
                "restaurants"))
LA_FIXED = "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'LA'"
LA_QUESTION = "What is the average rating of Italian restaurants in Los Angeles?"


def test_value_corrected_by_llm_from_value_memory_candidates(demo_dir, catalog, memories):
    rules = [YES, Rule(stage="plan", contains=LA_QUESTION, reply=LA_PLAN),
             # answers only when the value memory offered the stored spelling
             Rule(stage="correct_values", contains="'Los Angeles' (restaurant.city =): 'LA'", reply=sql_block(LA_FIXED)),
             Rule(stage="return_type", reply="Return type: (SQL)")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, LA_QUESTION)
    assert server.stages() == ["context_switch", "plan", "correct_values", "return_type"]
    expected = query(demo_dir, "restaurants", LA_FIXED)[0][0]
    assert expected is not None
    assert state.answer == str(expected)
    [result] = state.results()
    assert result == {"database": "restaurants", "sql": LA_FIXED, "columns": ["AVG(rating)"], "rows": [[expected]],
                      "error": None}
    [link] = records(state, "link_values")
    assert {"value": "Los Angeles", "column": "restaurant.city", "op": "=", "status": "not_found"}.items() <= \
        link["decision"]["literals"][1].items()
    assert link["decision"]["literals"][1]["similar"][0]["value"] == "LA"
    assert records(state, "correct_values")[0]["decision"] == {"sql": LA_FIXED, "changed": True}
    assert records(state, "postprocess_values")[0]["decision"] == {"replacements": []}
    [inspect] = records(state, "inspect")
    assert inspect["decision"]["action"] == "keep"
    assert inspect["decision"]["reused"] == ["value_checks"]  # postprocess_values checked the corrected SQL
    [execute] = records(state, "execute")
    assert execute["decision"]["reused"] == ["result"]  # inspection ran it: the query ran once
    assert_no_errors(state)


def test_value_corrected_without_llm_by_post_processing(demo_dir, catalog, memories):
    rules = [YES, Rule(stage="plan", reply=LA_PLAN), Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        llm = OpenAIChat(server.base_url, "fake-model", max_retries=0)
        pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values).without("correct_values")
        state = pipeline.ask(LA_QUESTION)
    assert "correct_values" not in server.stages()
    [fix] = records(state, "postprocess_values")[0]["decision"]["replacements"]
    assert (fix["value"], fix["replacement"], fix["column"]) == ("Los Angeles", "LA", "restaurant.city")
    assert state.results()[0]["sql"] == LA_FIXED
    assert state.answer == str(query(demo_dir, "restaurants", LA_FIXED)[0][0])
    assert_no_errors(state)


def test_a_city_compared_with_airport_codes_is_looked_up_without_llm(demo_dir, catalog, memories):
    question = "How many flights arrive in Seattle?"
    planned = "SELECT count(*) FROM flight WHERE destination = 'Seattle'"
    looked_up = ("SELECT count(*) FROM flight WHERE destination IN (SELECT \"code\" FROM \"airport\" WHERE "
                 "\"city\" = 'Seattle')")
    rules = [YES, Rule(stage="plan", reply=plan(("flights arriving in Seattle", planned, "flights"))),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        llm = OpenAIChat(server.base_url, "fake-model", max_retries=0)
        pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values).without("correct_values")
        state = pipeline.ask(question)
    decision = records(state, "postprocess_values")[0]["decision"]
    assert decision["replacements"] == []  # not the one code 'SEA' that "Seattle" resembles
    assert decision["lookups"] == [{"value": "Seattle", "column": "flight.destination", "key": "airport.code",
                                    "where": "airport.city"}]
    assert state.results()[0]["sql"] == looked_up
    assert state.answer == str(query(demo_dir, "flights", looked_up)[0][0])
    assert_no_errors(state)


def test_llm_correction_that_changes_more_than_literals_is_rejected(catalog, memories):
    sneaky = LA_FIXED.replace("AVG(rating)", "MAX(rating)")
    rules = [YES, Rule(stage="plan", reply=LA_PLAN), Rule(stage="correct_values", reply=sql_block(sneaky)),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, LA_QUESTION)
    decision = records(state, "correct_values")[0]["decision"]
    assert decision["rejected"] == sneaky and "more than string literals" in decision["reason"]
    assert state.results()[0]["sql"] == LA_FIXED  # post-processing still fixed the value, AVG kept


def test_two_database_comparison(demo_dir, catalog, memories):
    question = "Are there more hospitals or more restaurants in Boston?"
    hospitals = "SELECT COUNT(*) FROM hospital WHERE city = 'Boston'"
    restaurants = "SELECT COUNT(*) FROM restaurant WHERE city = 'Boston'"
    restaurants_fixed = restaurants.replace("'Boston'", "'BOS'")

    def compare(request):  # the fake writes its answer from the counts it is shown
        counts = {}
        for block in re.split(r"Query \d+ on database ", request.messages[-1]["content"])[1:]:
            counts[block.split()[0]] = int(block.strip().splitlines()[-1])
        more = max(counts, key=counts.get)
        return f"Answer: more {more} ({counts['restaurants']} restaurants, {counts['hospitals']} hospitals)"

    rules = [YES, Rule(stage="plan", contains=question, reply=plan(("hospitals in Boston", hospitals, "hospitals"),
                                                                  ("restaurants in Boston", restaurants,
                                                                   "restaurants"))),
             Rule(stage="correct_values", contains="'BOS'", reply=sql_block(restaurants_fixed)),
             Rule(stage="return_type", reply="Reasoning: two databases are combined.\nReturn type: (TEXT)"),
             Rule(stage="generate_output", reply=compare)]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, question)
    n_hospitals = query(demo_dir, "hospitals", hospitals)[0][0]
    n_restaurants = query(demo_dir, "restaurants", restaurants_fixed)[0][0]
    assert n_restaurants > n_hospitals > 0
    assert state.answer == f"more restaurants ({n_restaurants} restaurants, {n_hospitals} hospitals)"
    assert [(r["database"], r["sql"], r["rows"]) for r in state.results()] == [
        ("hospitals", hospitals, [[n_hospitals]]), ("restaurants", restaurants_fixed, [[n_restaurants]])]
    plan_prompt = server.requests[1].messages[-1]["content"]
    assert "Database: hospitals" in plan_prompt and "Database: restaurants" in plan_prompt
    assert_no_errors(state)


def test_sql_error_repaired_by_self_correction(demo_dir, catalog, memories):
    broken = "SELECT nme FROM singer WHERE country = 'Japan' ORDER BY nme"
    fixed = "SELECT name FROM singer WHERE country = 'Japan' ORDER BY name"
    rules = [YES, Rule(stage="plan", reply=plan(("singers from Japan", broken, "singers"))),
             Rule(stage="self_correct", contains="no such column: nme", reply=sql_block(fixed)),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, "List the names of the singers from Japan.")
    assert server.stages() == ["context_switch", "plan", "self_correct", "return_type"]
    names = query(demo_dir, "singers", fixed)
    assert names and state.results()[0]["rows"] == [list(row) for row in names]
    assert all(name in state.answer for (name,) in names)
    assert records(state, "inspect")[0]["decision"]["action"] == "left to self-correction"
    [execute] = records(state, "execute")
    assert "no such column: nme" in execute["decision"]["error"]
    [repair] = records(state, "self_correct")
    assert repair["decision"]["retry"] == 1 and repair["decision"]["sql"] == fixed and "error" not in repair["decision"]
    assert_no_errors(state)


def test_self_correction_sees_the_static_checks_of_the_failed_query(demo_dir, catalog, memories):
    # No foreign key links concert and singer, so the join repair leaves the query to self-correction.
    broken = "SELECT concert_name, name FROM concert"
    finding = "- error: column 'name' belongs to table singer, not in FROM; join it"
    fixed = ("SELECT concert.concert_name, singer.name FROM concert JOIN singer_in_concert "
             "ON concert.concert_id = singer_in_concert.concert_id JOIN singer "
             "ON singer_in_concert.singer_id = singer.singer_id")
    rules = [YES, Rule(stage="plan", reply=plan(("singers per concert", broken, "singers"))),
             Rule(stage="self_correct", contains=finding, reply=sql_block(fixed)),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, "Who sang in which concert?")
    [repair_prompt] = [r.messages[-1]["content"] for r in server.requests if r.stage == "self_correct"]
    assert f"Error:\nno such column: name\nStatic checks of the query:\n{finding}" in repair_prompt
    assert state.results()[0]["sql"] == fixed
    assert sorted(state.results()[0]["rows"]) == sorted(list(row) for row in query(demo_dir, "singers", fixed))


def test_self_correction_gives_up_after_its_retries(catalog, memories):
    broken = "SELECT nme FROM singer"
    rules = [YES, Rule(stage="plan", reply=plan(("names", broken, "singers"))),
             Rule(stage="self_correct", reply=sql_block("SELECT nmee FROM singer"))]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, "List the singers.", config={"self_correct_retries": 2})
    assert server.stages().count("self_correct") == 2
    assert state.answer.startswith("could not answer: the query on singers failed")
    assert "no such column: nmee" in state.answer


def test_self_correction_stops_when_the_repair_repeats_the_query(catalog, memories):
    broken = "SELECT nme FROM singer"
    rules = [YES, Rule(stage="plan", reply=plan(("names", broken, "singers"))),
             Rule(stage="self_correct", reply=sql_block(broken))]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, "List the singers.", config={"self_correct_retries": 4})
    assert server.stages().count("self_correct") == 1
    assert "no such column: nme" in state.answer


def test_follow_up_question_resolved_through_conversation_memory(demo_dir, catalog, memories):
    first = "How many Italian restaurants are in Los Angeles?"
    follow_up = "And how many are in San Francisco?"
    standalone = "How many Italian restaurants are in San Francisco?"
    count_la = "SELECT COUNT(*) FROM restaurant WHERE food_type = 'Italian' AND city = 'LA'"
    count_sf = "SELECT COUNT(*) FROM restaurant WHERE food_type = 'Italian' AND city = 'SF'"

    def second_plan(request):  # only a plan prompt that carries the first turn gets the follow-up plan
        assert f"Turn 1 question: {first}" in request.prompt and f"SQL on restaurants: {count_la}" in request.prompt
        return plan(("Italian restaurants in San Francisco", count_sf, "restaurants"))

    rules = [YES, Rule(stage="plan", contains=f"Question: {first}", reply=plan(("count", count_la, "restaurants"))),
             Rule(stage="rephrase", contains=f"Turn 1 question: {first}", reply=f"Rephrased: {standalone}"),
             Rule(stage="plan", contains=f"Question: {standalone}", reply=second_plan),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        llm = OpenAIChat(server.base_url, "fake-model", max_retries=0)
        pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values)
        first_state = pipeline.ask(first)
        second_state = pipeline.ask(follow_up)
    assert first_state.answer == str(query(demo_dir, "restaurants", count_la)[0][0])
    assert second_state.standalone_question == standalone
    assert second_state.answer == str(query(demo_dir, "restaurants", count_sf)[0][0])
    assert [r["stage"] for r in second_state.trace][:2] == ["rephrase", "context_switch"]
    assert len(pipeline.conversation) == 2
    assert_no_errors(first_state)
    assert_no_errors(second_state)


def test_conversation_switched_off_forgets_earlier_turns(catalog, memories):
    rules = [YES, Rule(stage="plan", reply=plan(("count", "SELECT COUNT(*) FROM restaurant", "restaurants"))),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        pipeline, _ = ask(server, catalog, memories, "How many restaurants are there?", disable={"conversation"})
        pipeline.ask("And how many of them are Italian?")
    assert "rephrase" not in server.stages() and pipeline.conversation is None
    assert "Turn 1 question" not in server.requests[-2].prompt


REFUSED_DROP = "refused: only one SELECT or WITH ... SELECT statement may run, not DROP"


def test_generated_drop_is_refused_and_nothing_changes(demo_dir, catalog, memories):
    path = demo_dir / "restaurants" / "restaurants.sqlite"
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    rules = [YES, Rule(stage="plan", reply=plan(("remove the table", "DROP TABLE restaurant", "restaurants")))]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, "Delete all restaurants.")
    assert server.stages() == ["context_switch", "plan"]  # no repair, no answer from an unexecuted statement
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert query(demo_dir, "restaurants", "SELECT COUNT(*) FROM restaurant")[0][0] == 120
    [result] = state.results()
    assert result["rows"] == [] and result["error"] == REFUSED_DROP
    [inspect] = records(state, "inspect")
    assert inspect["decision"] == {"refused": REFUSED_DROP, "action": "left to execution"}
    [execute] = records(state, "execute")
    assert execute["decision"]["refused"] == execute["error"] == REFUSED_DROP  # the executor's own reason
    assert execute["decision"]["reused"] == ["result"]
    assert state.answer.startswith("could not answer: the query on restaurants failed (refused")


def test_malformed_plan_and_network_faults_keep_the_trace(catalog, memories):
    rules = [YES, Rule(stage="plan", reply="I would look at the restaurant table somehow.")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, LA_QUESTION)
    [planning] = records(state, "plan")
    assert [call["attempt"] for call in planning["llm_calls"]] == [1, 2]
    assert planning["llm_calls"][1]["output"] == "I would look at the restaurant table somehow."
    assert state.answer.startswith("could not answer: no usable plan")

    rules = [Rule(stage="context_switch", fault="server_error"), Rule(stage="plan", fault="server_error")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, LA_QUESTION)
    switch, planning = records(state, "context_switch")[0], records(state, "plan")[0]
    assert switch["decision"]["fallback"] and "500" in switch["error"]
    assert "LLM call failed" in planning["llm_calls"][0]["error"]
    assert state.answer.startswith("could not answer: no usable plan (LLM call failed")
    assert state.trace.stages()[:4] == ["context_switch", "select_databases", "build_context", "plan"]


def test_disabled_value_memory_leaves_the_value_and_refinement_sees_the_empty_result(catalog, memories):
    rules = [YES, Rule(stage="plan", reply=LA_PLAN),
             Rule(stage="refine", contains="column AVG(rating) is NULL in every row",
                  reply=sql_block(LA_PLAN.split("Begin SQL\n")[1].split("\nEnd SQL")[0])),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, LA_QUESTION, disable={"value_memory"})
    assert not any(s in state.trace.stages() for s in ("link_values", "correct_values", "postprocess_values"))
    [inspect] = records(state, "inspect")
    assert inspect["decision"]["retriever"].startswith("The database retriever is not available")
    assert inspect["decision"]["action"] == "refine"
    [refine] = records(state, "refine")
    assert refine["error"] is None and refine["decision"]["changed"] is False  # unchanged: the rounds end
    assert server.stages().count("refine") == 1
    assert state.results()[0]["rows"] == [[None]] and state.answer == "NULL"


def test_a_count_where_the_question_asks_which_rows_goes_to_refinement(demo_dir, catalog, memories):
    question = "Which hospitals in San Francisco have a trauma center?"
    counted = "SELECT COUNT(*) FROM hospital WHERE city = 'San Francisco' AND trauma_center = 'Y'"
    listed = "SELECT name FROM hospital WHERE city = 'San Francisco' AND trauma_center = 'Y'"
    rules = [YES, Rule(stage="plan", reply=plan(("hospitals with a trauma center", counted, "hospitals"))),
             Rule(stage="refine", contains="the question asks which rows, not how many",
                  reply=sql_block(listed)),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, question)
    assert [r["decision"]["action"] for r in records(state, "inspect")] == ["refine", "keep"]
    assert state.results()[0]["sql"] == listed
    assert state.results()[0]["rows"] == [list(row) for row in query(demo_dir, "hospitals", listed)]
    assert_no_errors(state)
    rules[1] = Rule(stage="plan", reply=plan(("hospitals with a trauma center", counted, "hospitals")))
    with FakeLLMServer(rules) as server:
        _, state = ask(server, catalog, memories, "How many hospitals in San Francisco have a trauma center?")
    assert [r["decision"]["action"] for r in records(state, "inspect")] == ["keep"]


def test_refinement_uses_the_retriever_feedback(demo_dir, catalog, memories):
    config = PipelineConfig(refine_rounds=1)
    rules = [YES, Rule(stage="plan", reply=LA_PLAN),
             Rule(stage="refine", contains="similar stored values: 'LA'", reply=sql_block(LA_FIXED)),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        llm = OpenAIChat(server.base_url, "fake-model", max_retries=0)
        pipeline = Pipeline.default(catalog, llm, memories.selection, memories.values, config=config)
        pipeline = pipeline.without("correct_values", "postprocess_values")
        state = pipeline.ask(LA_QUESTION)
    assert [r["decision"]["action"] for r in records(state, "inspect")] == ["refine", "keep"]
    assert state.answer == str(query(demo_dir, "restaurants", LA_FIXED)[0][0])


def test_examples_above_the_threshold_go_into_planning(catalog, memories):
    examples = relmem.agent.Memories.build(catalog, encoder="hashing", values=False, examples=[
        {"question": "What is the average rating of Mexican restaurants in Seattle?",
         "sql": "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Mexican' AND city = 'SEA'",
         "database": "restaurants"},
        {"question": "How many doctors are cardiologists?", "sql": "SELECT COUNT(*) FROM doctor", "database": "hospitals"},
    ]).examples
    rules = [YES, Rule(stage="plan", contains="city = 'SEA'", reply=plan(("avg", LA_FIXED, "restaurants"))),
             Rule(stage="return_type", reply="(SQL)")]
    with FakeLLMServer(rules) as server:
        llm = OpenAIChat(server.base_url, "fake-model", max_retries=0)
        state = Pipeline.default(catalog, llm, memories.selection, memories.values, examples,
                                 config={"example_threshold": 0.5}).ask(LA_QUESTION)
    [retrieved] = records(state, "retrieve_examples")
    assert [e["question"] for e in retrieved["decision"]["examples"]] == [
        "What is the average rating of Mexican restaurants in Seattle?"]
    assert "cardiologists" not in server.requests[1].prompt
    assert state.results()[0]["sql"] == LA_FIXED
    assert_no_errors(state)


def test_without_llm_only_the_llm_free_stages_run(catalog, memories):
    pipeline = Pipeline.default(catalog, None, memories.selection, memories.values)
    state = pipeline.ask(LA_QUESTION)
    assert state.trace.stages() == ["select_databases", "link_question_values", "no_llm"]
    assert state.candidates[0].database == "restaurants"
    assert "No LLM is configured" in state.answer
    assert "'Los Angeles' -> restaurant.city = 'LA'" in state.answer


@pytest.mark.parametrize("switch, removed", [
    ("context_switch", {"context_switch", "answer_directly", "answer_without_data"}),
    ("value_memory", {"link_values", "correct_values", "postprocess_values", "learn_values"}),
    ("refinement", {"refine"}), ("self_correction", {"self_correct"}), ("return_type", {"return_type"}),
    ("conversation", {"rephrase"}),
])
def test_ablations_are_configuration(catalog, memories, switch, removed):
    llm = relmem.llm.CallableLLM(lambda messages, **params: "")
    full = Pipeline.default(catalog, llm, memories.selection, memories.values).names
    ablated = Pipeline.default(catalog, llm, memories.selection, memories.values, disable={switch}).names
    assert set(full) - set(ablated) == removed and removed <= set(full)
    assert ablated == [name for name in full if name not in removed]


def test_unknown_switch_and_missing_stage_are_clear_errors(catalog, memories):
    with pytest.raises(relmem.Error, match="unknown stage switch"):
        Pipeline.default(catalog, None, memories.selection, disable={"values"})
    with pytest.raises(relmem.Error, match="no stage 'plan'"):
        Pipeline.default(catalog, None, memories.selection).replace("plan", None)


def test_conversation_memory_keeps_the_last_turns():
    memory = ConversationMemory()
    for i in range(5):
        memory.add(relmem.agent.Turn(f"q{i}", f"a{i}"))
    assert [t.question for t in memory.recent(3)] == ["q2", "q3", "q4"] and memory.recent(0) == []


def test_stages_can_be_replaced_and_a_failing_stage_ends_the_question_cleanly(catalog, memories):
    class FixedPlan(relmem.agent.Stage):
        name = "plan"
        writes = ("targets",)

        def run(self, state):
            with state.trace.step(self.name) as step:
                state.targets = [relmem.agent.QueryTarget(0, "count", "singers", "SELECT COUNT(*) FROM singer")]
                step.decide(targets=1)

    class Broken(relmem.agent.Stage):
        name = "return_type"

        def run(self, state):
            raise RuntimeError("out of order")

    with FakeLLMServer([]) as server:
        pipeline = default_pipeline(server, catalog, memories, disable={"context_switch"})
        pipeline = pipeline.replace("plan", FixedPlan()).replace("return_type", Broken())
        state = pipeline.ask("How many singers are there?")
    assert server.requests == []
    assert state.answer == "could not answer: stage return_type failed: out of order"
    assert records(state, "execute")[0]["decision"]["rows"] == 1
    assert state.trace.records[-1] == {**state.trace.records[-1], "stage": "return_type",
                                       "error": "RuntimeError: out of order"}
    assert state.results()[0]["rows"] == [[60]]
