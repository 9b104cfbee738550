"""The schema context of the SQL prompts: relevant tables with their foreign-key bridges, linked values next to their
columns, example rows, the token budget and the full-DDL switch; and its use by the pipeline."""
import sqlite3

import pytest

import relmem
from relmem.agent import Pipeline
from relmem.agent.context_builder import ContextBuilder, count_tokens
from relmem.agent.context_schema import DatabaseSchema, question_words
from relmem.agent.schemas import schema_text
from relmem.llm import ScriptedLLM, ScriptRule
from relmem.rows import RowMemory

QUESTION = "Which customers from Glasgow bought a lamp?"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shop")
    db = sqlite3.connect(folder / "shop.sqlite")
    db.executescript("""
        CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, full_name TEXT, city TEXT);
        CREATE TABLE purchase (purchase_id INTEGER PRIMARY KEY, quantity INT,
                               customer_id INTEGER REFERENCES customer(customer_id),
                               item_id INTEGER REFERENCES item(item_id));
        CREATE TABLE item (item_id INTEGER PRIMARY KEY, title TEXT, price REAL);
        CREATE TABLE supplier (supplier_id INTEGER PRIMARY KEY, supplier_name TEXT, country TEXT, phone TEXT);
        CREATE TABLE warehouse (warehouse_id INTEGER PRIMARY KEY, address TEXT, capacity INT);
        INSERT INTO customer VALUES (1, 'Ann Lee', 'Glasgow'), (2, 'Bo Chan', 'Leeds');
        INSERT INTO item VALUES (1, 'Lamp', 20.0), (2, 'Desk', 120.0);
        INSERT INTO purchase VALUES (1, 2, 1, 1), (2, 1, 2, 2);
        INSERT INTO supplier VALUES (1, 'Acme', 'France', '555'), (2, 'Lumen', 'Spain', '556');
        INSERT INTO warehouse VALUES (1, '1 Dock Road', 500);
    """)
    db.commit()
    db.close()
    zoo = sqlite3.connect(folder / "zoo.sqlite")
    zoo.executescript("CREATE TABLE animal (name TEXT, species TEXT); INSERT INTO animal VALUES ('Rex', 'dog');")
    zoo.close()
    catalog = relmem.Catalog(str(folder))
    encoder = relmem.HashingEncoder(256)
    return (catalog, relmem.SelectionMemory.build(catalog, encoder), relmem.ValueMemory.build(catalog, encoder),
            RowMemory.build(catalog))


def builder(shop, **options):
    catalog, selection, values, rows = shop
    return ContextBuilder(catalog, selection, values=values, rows=rows, **options)


def test_count_tokens_counts_words_numbers_and_symbols():
    assert count_tokens("CREATE TABLE t (a INT);") == 8
    assert count_tokens("customer_identifier 123456") == 6  # customer|_|identifi|er|123|456


def test_full_ddl_switch_gives_each_candidate_its_ddl(shop):
    catalog = shop[0]
    context = builder(shop, mode="full_ddl").build(QUESTION, ["shop", "zoo"])
    assert context.text == schema_text(catalog, "shop") + "\n\n" + schema_text(catalog, "zoo")
    assert [t.name for t in context.database("shop").tables] == [t.name for t in catalog.schema("shop").tables]
    with pytest.raises(relmem.Error, match="unknown context mode"):
        builder(shop, mode="everything")


def test_built_context_keeps_relevant_tables_their_join_bridge_values_and_rows(shop):
    context = builder(shop, table_margin=0.05).build(QUESTION, ["shop", "zoo"], scores=[0.9, 0.1])
    shop_context = context.database("shop")
    kept = {t.name: t for t in shop_context.tables}
    assert {"customer", "item"} <= set(kept)
    assert kept["purchase"].reason == "join"  # the foreign-key path from customer to item
    assert "supplier" in shop_context.dropped and "warehouse" in shop_context.dropped
    assert "CREATE TABLE supplier" not in context.text
    assert "city TEXT -- question values: 'Glasgow' (\"Glasgow\")" in context.text
    assert "REFERENCES customer(customer_id)" in context.text
    assert len(kept["customer"].rows) == 1 and "/* 1 example row of customer" in context.text
    zoo = context.database("zoo").tables  # far below the best table of all candidates: its best table alone
    assert [(t.name, t.reason) for t in zoo] == [("animal", "best")]
    without_floor = builder(shop, table_margin=0.05, min_tables=0).build(QUESTION, ["shop", "zoo"], scores=[0.9, 0.1])
    assert without_floor.database("zoo").tables == []
    recorded = context.to_dict()
    assert recorded["mode"] == "built" and recorded["tokens"] == context.tokens
    assert {"span": "Glasgow", "column": "customer.city", "value": "Glasgow"} in recorded["databases"][0]["values"]
    assert {"span": "lamp", "column": "item.title", "value": "Lamp"} in recorded["databases"][0]["values"]


def test_each_database_keeps_its_best_table_under_the_token_budget(shop):
    tight = builder(shop, table_margin=10.0, rows_per_table=0, token_budget=1)
    context = tight.build(QUESTION, ["shop", "zoo"], scores=[0.9, 0.1])
    assert [len(context.database(db).tables) for db in ("shop", "zoo")] == [1, 1]  # over the budget, one each
    two = builder(shop, table_margin=10.0, rows_per_table=0, token_budget=1, min_tables=2)
    assert len(two.build(QUESTION, ["shop"]).database("shop").tables) == 2
    alone = builder(shop, table_margin=10.0, rows_per_table=0, token_budget=1, min_tables=0)
    assert sum(len(alone.build(QUESTION, ["shop", "zoo"], scores=[0.9, 0.1]).database(db).tables)
               for db in ("shop", "zoo")) == 1  # the best table of all stays whatever its size
    with pytest.raises(relmem.Error, match="min_tables"):
        builder(shop, min_tables=-1)


def test_tables_a_kept_table_references_come_within_the_parent_margin(shop):
    question = "What quantity does each purchase hold?"
    alone = builder(shop, table_margin=0.0, parent_margin=-10.0).build(question, ["shop"]).database("shop")
    assert [t.name for t in alone.tables] == ["purchase"]  # the best table, and no table scores 10 above it
    with_parents = builder(shop, table_margin=0.0, parent_margin=10.0).build(question, ["shop"]).database("shop")
    kept = {t.name: t.reason for t in with_parents.tables}
    assert kept == {"purchase": "score", "customer": "parent", "item": "parent"}  # purchase's foreign keys
    assert "FOREIGN KEY (customer_id) REFERENCES customer(customer_id)" in with_parents.text


def test_a_referenced_table_holding_a_column_the_question_names_comes_outside_the_parent_margin(shop):
    question = "What quantity and price does each purchase have?"
    context = builder(shop, table_margin=0.0, parent_margin=-10.0).build(question, ["shop"]).database("shop")
    kept = {t.name: t.reason for t in context.tables}
    assert kept == {"purchase": "score", "item": "parent"}  # item.price is named; customer's columns are not
    assert "FOREIGN KEY (item_id) REFERENCES item(item_id)" in context.text


def test_database_schema_is_read_once_with_names_keys_and_paths(shop):
    schema = DatabaseSchema.read(shop[0], "shop")
    assert schema.parents == {"customer": [], "purchase": ["customer", "item"], "item": [], "supplier": [],
                              "warehouse": []}
    assert schema.path("customer", "item") == ["customer", "purchase", "item"]
    assert schema.path("customer", "warehouse") == []
    purchase = schema.by_name["purchase"]
    assert purchase.key_columns == {"purchase_id", "customer_id", "item_id"}
    assert [c.line for c in purchase.columns[:2]] == ["  purchase_id INTEGER PRIMARY KEY", "  quantity INT"]
    assert schema.positions["purchase", "quantity"] == purchase.first + 1
    tables, columns = schema.name_overlaps(question_words("the full names of customers"))
    assert tables == {0: 1.0}  # customer
    assert columns == {schema.positions[key]: share for key, share in [
        (("customer", "customer_id"), 0.5), (("customer", "full_name"), 1.0), (("purchase", "customer_id"), 0.5),
        (("supplier", "supplier_name"), 0.5)]}


@pytest.mark.skipif(not relmem._relmem.WordNet.available(), reason="WordNet is not installed (Debian: wordnet-base)")
def test_question_words_name_what_an_adjective_measures():
    assert {"height", "stature"} <= question_words("Who is the tallest player?")
    assert "age" in question_words("the oldest dogs") and "age" not in question_words("the dogs")


def test_each_part_of_a_question_keeps_its_best_tables_and_adds_to_the_budget(shop):
    question = "Q1: Which customers bought a lamp? Q2: What is the capacity of each warehouse?"
    context = builder(shop, table_margin=0.05, token_budget=500).build(question, ["shop", "zoo"], scores=[0.9, 0.1])
    kept = {t.name for t in context.database("shop").tables}
    assert {"customer", "warehouse"} <= kept and "supplier" not in kept
    assert context.budget == 1000  # two parts
    single = builder(shop, table_margin=0.05, token_budget=500).build("What is the capacity of each warehouse?",
                                                                      ["shop"])
    assert single.budget == 500


def test_question_words_use_the_cores_plural_rules():
    assert question_words("Which cities host the most matches and players?") == {"city", "host", "most", "match",
                                                                                   "player"}
    assert question_words("status of the bus") == {"status", "bus"}
    assert question_words("liked players") == {"liked", "like", "lik", "player"}  # a past participle's stems


def test_budget_drops_rows_first_then_the_lowest_scored_tables(shop):
    question, names = "customers, purchases, items, suppliers and warehouses", ["shop"]
    full = builder(shop, table_margin=10.0, token_budget=100000).build(question, names)
    assert len(full.database("shop").tables) == 5 and all(t.rows for t in full.database("shop").tables)
    without_rows = sum(count_tokens(line) for line in full.text.splitlines() if "/*" not in line and "(" != line[:1])
    tight = builder(shop, table_margin=10.0, token_budget=full.tokens - 1).build(question, names)
    assert all(not t.rows for t in tight.database("shop").tables) and len(tight.database("shop").tables) == 5
    scores = sorted((t.score, t.name) for t in full.database("shop").tables)
    smaller = builder(shop, table_margin=10.0, token_budget=tight.tokens - 1).build(question, names)
    kept = {t.name for t in smaller.database("shop").tables}
    assert scores[0][1] not in kept and scores[-1][1] in kept and smaller.tokens <= tight.tokens - 1
    assert without_rows > 0
    minimal = builder(shop, table_margin=10.0, token_budget=1).build(question, names)
    assert [t.name for t in minimal.database("shop").tables] == [scores[-1][1]]  # the best table stays


def test_pipeline_plans_over_the_built_context_and_traces_it(shop):
    catalog, selection, values, rows = shop
    llm = ScriptedLLM([ScriptRule(stage="context_switch", reply="Answer: (YES)"),
                       ScriptRule(stage="plan", reply="No relevant database")])
    for mode in ("built", "full_ddl"):
        pipeline = Pipeline.default(catalog, llm, selection, values, rows=rows, config={"context": mode},
                                    disable={"conversation"})
        state = pipeline.ask(QUESTION)
        record = next(r for r in state.trace.records if r["stage"] == "build_context")
        prompt = [r for r in llm.requests if r.stage == "plan"][-1].prompt
        assert record["decision"]["mode"] == mode and record["decision"]["text"] in prompt
        zoo = next(d for d in record["decision"]["databases"] if d["database"] == "zoo")
        # The zoo's table has nothing to do with the question: the built context shows it as the zoo's best table only.
        assert [t.get("reason") for t in zoo["tables"]] == (["best"] if mode == "built" else [None])


def test_link_all_and_schema_scores_match_their_one_database_forms(shop):
    catalog, selection, values, _ = shop
    summary = [[(l.span, l.start, l.table, l.column, l.value, l.score) for l in links]
               for links in values.link_all(["shop", "zoo"], QUESTION)]
    assert summary == [[(l.span, l.start, l.table, l.column, l.value, l.score) for l in values.link(db, QUESTION)]
                       for db in ("shop", "zoo")]
    assert summary[0]
    scores = selection.schema_scores(QUESTION, ["shop", "zoo"])
    assert [s.tables for s in scores] == [selection.tables("shop"), selection.tables("zoo")]
    assert [len(s.column_scores) for s in scores] == [sum(len(t.columns) for t in catalog.schema(db).tables)
                                                      for db in ("shop", "zoo")]
    assert all(-1.0001 <= x <= 1.0001 for s in scores for x in s.table_scores + s.column_scores)
    with pytest.raises(relmem.Error, match="unknown database 'nope'"):
        selection.schema_scores(QUESTION, ["nope"])
