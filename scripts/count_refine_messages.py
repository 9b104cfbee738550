"""How often the local model's refinement turns a count into the rows the question asks for, per wording of the
detector's message. The counts are made from train_spider.json gold queries that list rows for questions with no
count word: "SELECT name FROM t WHERE ..." becomes "SELECT count(*) FROM t WHERE ...", the mistake the message is
meant to catch. A refinement is right when its query returns the gold rows.

    python scripts/count_refine_messages.py --spider ../shared/data/spider --n 30 [--seed 1] --out /tmp/counts.jsonl
"""
import argparse
import json
import random
import re
import sys

import relmem
import relmem.sql
from relmem.agent.stages.inspection import COUNT_WORDS, COUNTS_UNASKED
from relmem.contracts import CONTRACTS
from relmem.engines.dialects import sql_prompt_fields
from relmem.eval.answers import rows_match
from relmem.llm import LocalModel
from relmem.parsers import parse_sql
from relmem.prompt_templates import render_prompt

MESSAGES = {
    "does not ask how many": "error: the query returns only a count, but the question does not ask how many; return "
                             "the values the question asks for.",
    "which rows": "error: the question asks which rows, not how many; select the columns that identify those rows "
                  "(such as their names) instead of COUNT(*).",
    "replace the count": "error: the question does not ask how many, so the answer is not a count: replace COUNT(*) "
                         "with the column the question asks for.",
    "change only SELECT": "error: the question asks which rows, not how many: the SELECT clause must list the "
                          "columns that answer it instead of COUNT(*). Change only the SELECT clause.",
}
LISTING = re.compile(r"^SELECT\s+(?!.*\b(count|sum|avg|min|max)\s*\()(?P<columns>.+?)\s+FROM\s+(?P<rest>.+)$",
                     re.IGNORECASE | re.DOTALL)
NESTED = re.compile(r"\b(GROUP BY|ORDER BY|LIMIT|UNION|INTERSECT|EXCEPT|SELECT\b.*\bSELECT)\b",
                    re.IGNORECASE | re.DOTALL)


def single_quoted(sql):
    """The query with its string literals in single quotes, as the plans write them ("Ueno" is a name to SQLite)."""
    literals = relmem.sql.parse(sql).literals
    return relmem.sql.rewrite_literals(sql, {l.index: l.value for l in literals if l.kind == "string"})


def shown_schema(catalog, database, tables):
    """The DDL and grammar columns of the tables the gold query reads, as a built context would keep them."""
    wanted = {t.lower() for t in tables}
    statements = [s.strip() for s in catalog.ddl(database).split(";\n") if s.strip()]
    kept = [s for s in statements if s.split("(")[0].split()[-1].strip('"`[]').lower() in wanted]
    columns = {t.name: [c.name for c in t.columns] for t in catalog.schema(database).tables if t.name.lower() in wanted}
    return f"Database: {database}\n" + ";\n".join(kept).rstrip(";") + ";", columns


def cases(spider, databases, n, seed):
    """(question, database, counted SQL, gold SQL) of `n` train questions whose gold lists rows."""
    picked = []
    for item in json.load(open(f"{spider}/train_spider.json")):
        query = single_quoted(" ".join(item["query"].split()))
        match = LISTING.match(query)
        if (item["db_id"] in databases and match and not NESTED.search(query)
                and not COUNT_WORDS.search(item["question"])):
            picked.append((item["question"], item["db_id"], f"SELECT count(*) FROM {match['rest']}", query))
    random.Random(seed).shuffle(picked)
    return picked[:n]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spider", required=True)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    catalog = relmem.Catalog(f"{args.spider}/database")
    model = LocalModel.open()
    totals = {name: 0 for name in MESSAGES}
    chosen = cases(args.spider, set(catalog.databases), args.n, args.seed)
    with open(args.out, "w") as out:
        for question, database, counted, gold in chosen:
            gold_rows = catalog.execute(database, gold).rows
            schema, columns = shown_schema(catalog, database, relmem.sql.parse(gold).tables)
            grammar = CONTRACTS["sql"].constraints(schema=columns, dialect="sqlite")
            for name, message in MESSAGES.items():
                messages = render_prompt("refine", schema=schema, question=question,
                                         sql=counted, detector_feedback=message, **sql_prompt_fields(catalog, database),
                                         retriever_feedback="Every value of the query's conditions is stored as "
                                                            "written.")
                reply = model(messages, stage="refine", temperature=0.0, **grammar).text
                try:
                    refined = parse_sql(reply)
                    result = catalog.execute(database, refined)
                    right = result.ok and rows_match(result.rows, gold_rows)
                except relmem.Error:
                    refined, right = None, False
                totals[name] += right
                out.write(json.dumps({"question": question, "database": database, "message": name,
                                      "refined": refined, "right": right}) + "\n")
                out.flush()
    served = [name for name, message in MESSAGES.items() if message == COUNTS_UNASKED]
    json.dump({"cases": len(chosen), "model": model.description, "right": totals, "served": served}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
