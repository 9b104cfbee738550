"""The demo job: memories built once and reused, database selection, value links, and the LLM pipeline against the
fake OpenAI-compatible server."""
import argparse
import os
import sqlite3

import pytest
from fake_llm_server import FakeLLMServer, Rule

from relmem.demo import job
from relmem.encoders import minilm_installed, use_lite_installed
from relmem.values import lexicon_info

PLANS = {  # question -> (database, SQL as the fake planner writes it)
    "What is the average rating of Italian restaurants in Los Angeles?":
        ("restaurants", "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'Los Angeles'"),
    "Which hospitals in San Francisco have a trauma center?":
        ("hospitals", "SELECT name FROM hospital WHERE city = 'San Francisco' AND trauma_center = 'Y'"),
    "What is the population of Seattle and when was it founded?":
        ("world_cities", "SELECT population, founded_year FROM city WHERE name = 'Seattle'"),
    "How many female singers are older than 30?":
        ("singers", "SELECT COUNT(*) FROM singer WHERE gender = 'F' AND age > 30"),
    "Which employees in the research and development department earn more than 100000?":
        ("employees", "SELECT e.first_name, e.last_name FROM employee AS e JOIN department AS d "
                      "ON e.dept_id = d.dept_id WHERE d.dept_name = 'R&D' AND e.salary > 100000"),
    "List flights from Los Angeles to New York cheaper than 300 dollars.":
        ("flights", "SELECT flight_id, price_usd FROM flight WHERE source = 'LAX' AND destination = 'JFK' "
                    "AND price_usd < 300"),
    "How many computer science students have a GPA above 3.5?":
        ("university", "SELECT COUNT(*) FROM student WHERE major = 'CS' AND gpa > 3.5"),
}
LA_FIXED = "SELECT AVG(rating) FROM restaurant WHERE food_type = 'Italian' AND city = 'LA'"


def fake_plan(request):
    question = next(q for q in PLANS if q in request.prompt)
    db, sql = PLANS[question]
    return f"Goal: {question}\nBegin SQL\n{sql}\nEnd SQL\nDatabase: {db}"


RULES = [
    Rule(stage="context_switch", contains="Hamlet", reply="Answer: (NO)"),
    Rule(stage="context_switch", reply="Answer: (YES)"),
    Rule(stage="plan", reply=fake_plan),
    Rule(stage="correct_values", contains="'LA'", reply=f"Begin SQL\n{LA_FIXED}\nEnd SQL"),
    Rule(stage="return_type", contains="Seattle", reply="(SQL)"),
    Rule(stage="return_type", reply="(TEXT)"),
    Rule(stage="answer_directly", contains="Hamlet", reply="Answer: William Shakespeare"),
    Rule(stage="generate_output", reply=lambda r: "Answer: " + r.messages[-1]["content"].strip().splitlines()[-1]),
]


@pytest.fixture
def no_llm_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("RELMEM_LLM_"):
            monkeypatch.delenv(name)


def run_demo(tmp_path, encoder_name="hashing", **options):
    lines = []
    summary = job.run(folder=str(tmp_path / "demo"), encoder_name=encoder_name, out=lines.append,
                      memory_folder=str(tmp_path / "memory"), **options)
    return summary, "\n".join(lines)


def test_demo_selects_databases_and_links_values_without_llm(tmp_path, no_llm_env):
    summary, text = run_demo(tmp_path)
    assert summary["memory"] == "built" and summary["encoder"] == "hashing:512"
    assert summary["answerable"] == 7 and summary["hits"] == 7
    assert len(summary["rankings"]) == len(job.QUESTIONS)
    assert all(len(ranking) == 3 and all(0.0 <= p <= 1.0 for _, _, p in ranking) for ranking in summary["rankings"])
    assert ("Los Angeles", "LA", "restaurant", "city") in [link[:4] for link in summary["links"][0]["restaurants"]]
    assert """"Los Angeles" = restaurant.city 'LA'""" in text
    assert "Q: Who wrote the play Hamlet?" in text and f"expected: {job.NONE_EXPECTED}" in text
    assert not any(link[0] == "New York cheaper" for links in summary["links"][5].values() for link in links)
    assert summary["llm"] is False and summary["answers"] == []
    assert text.endswith(job.NO_LLM) and "no LLM: the local model is not installed" in job.NO_LLM


needs_minilm = pytest.mark.skipif(not minilm_installed(), reason="MiniLM not installed (make setup)")
needs_use_lite = pytest.mark.skipif(not use_lite_installed(), reason="USE-lite weights not installed (make setup)")
# Database questions whose database is selected (p >= 0.5): under MiniLM the flights question's database is first
# but at p 0.263 (docs/encoders.md).
SELECTED = {"minilm": 6, "use-lite": 7}


@pytest.mark.parametrize("encoder", [pytest.param("minilm", marks=needs_minilm),
                                     pytest.param("use-lite", marks=needs_use_lite)])
def test_demo_ranks_each_database_first_and_selects_none_for_hamlet(tmp_path, no_llm_env, encoder):
    summary, text = run_demo(tmp_path, encoder_name=encoder)
    assert summary["encoder"] == encoder and summary["hits"] == 7 and summary["set_hits"] == SELECTED[encoder]
    for (question, expected), ranking, selected in zip(job.QUESTIONS, summary["rankings"], summary["selected"]):
        best, _, p = ranking[0]
        if expected is None:
            assert p < 0.5 and selected == [], question
        else:
            assert best == expected and selected == ([expected] if p >= 0.5 else []), question
    assert "selected: none" in text


@pytest.mark.parametrize("encoder", [pytest.param(None, marks=needs_minilm),
                                     pytest.param("use-lite", marks=needs_use_lite)])
def test_demo_lets_the_memory_route_questions(tmp_path, no_llm_env, encoder):
    with FakeLLMServer(RULES) as server:
        summary, text = run_demo(tmp_path, encoder_name=encoder, llm=job.from_config(
            base_url=server.base_url, model="fake-model", max_retries=0))
    assert summary["encoder"] == (encoder or "minilm")  # MiniLM is the default when installed
    assert "context_switch" not in server.stages()  # the encoder's selection gate decides
    assert server.stages().count("plan") == 7 and server.stages().count("answer_directly") == 1
    assert "answer: William Shakespeare" in text and "could not answer" not in text


@pytest.mark.skipif(bool(lexicon_info()["missing_sources"]), reason="WordNet or the value data files are missing")
def test_demo_links_values_by_meaning(tmp_path, no_llm_env):
    summary, text = run_demo(tmp_path)
    assert ("computer science", "CS", "student", "major") in [link[:4] for link in summary["links"][6]["university"]]
    assert ("female", "F", "singer", "gender") in [link[:4] for link in summary["links"][3]["singers"]]
    assert """"female" = singer.gender 'F'""" in text


def test_demo_reuses_its_memories_until_a_database_changes(tmp_path, no_llm_env):
    first, _ = run_demo(tmp_path)
    second, text = run_demo(tmp_path)
    assert (first["memory"], second["memory"]) == ("built", "loaded") and "memories loaded from" in text
    assert second["rankings"] == first["rankings"] and second["links"] == first["links"]
    path = tmp_path / "demo" / "restaurants" / "restaurants.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("UPDATE restaurant SET city = 'LA' WHERE id = 1")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert run_demo(tmp_path)[0]["memory"] == "built"
    assert run_demo(tmp_path)[0]["memory"] == "loaded"
    assert run_demo(tmp_path, rebuild=True)[0]["memory"] == "built"


def test_demo_rebuilds_damaged_memories(tmp_path, no_llm_env):
    run_demo(tmp_path)
    (tmp_path / "memory" / "manifest.json").write_text("{not json")
    summary, text = run_demo(tmp_path)
    assert summary["memory"] == "built" and "could not be loaded" in text and summary["hits"] == 7


def test_demo_flags_run_the_full_pipeline_with_an_llm(tmp_path, no_llm_env, capsys):
    parser = job.add_arguments(argparse.ArgumentParser())
    with FakeLLMServer(RULES) as server:
        args = parser.parse_args(["--dir", str(tmp_path / "demo"), "--encoder", "hashing", "--memory",
                                  str(tmp_path / "memory"), "--llm-base-url", server.base_url,
                                  "--llm-model", "fake-model", "--llm-max-retries", "0"])
        assert job.run_args(args) == 0
    text = capsys.readouterr().out
    assert "could not answer" not in text and job.NO_LLM not in text
    assert "the LLM pipeline answered 8 of 8 questions" in text
    assert "answer: William Shakespeare" in text
    with sqlite3.connect(tmp_path / "demo" / "restaurants" / "restaurants.sqlite") as db:
        average = db.execute(LA_FIXED).fetchone()[0]
    assert f"answer: {average}" in text and f"[restaurants] {LA_FIXED}" in text
    seattle = text.split("when was it founded?", 1)[1].splitlines()
    answer_at = seattle.index("  answer:")  # its rows are the answer: a table below the label, indented
    assert seattle[answer_at + 1].split() == ["population", "|", "founded_year"]
    assert seattle[answer_at + 1].startswith("    ")
    assert server.stages().count("plan") == 7 and server.stages().count("correct_values") == 1


def test_demo_reads_the_llm_from_the_environment(tmp_path, no_llm_env, monkeypatch):
    questions = [q for q in job.QUESTIONS if q[0].startswith(("Who wrote", "How many computer"))]
    with FakeLLMServer(RULES) as server:
        monkeypatch.setenv("RELMEM_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("RELMEM_LLM_MODEL", "fake-model")
        summary, _ = run_demo(tmp_path, questions=questions)
    with sqlite3.connect(tmp_path / "demo" / "university" / "university.sqlite") as db:
        students = db.execute(PLANS[questions[0][0]][1]).fetchone()[0]
    assert summary["llm"] is True and summary["answers"] == [str(students), "William Shakespeare"]
