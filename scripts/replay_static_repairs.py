"""What the static repairs (relmem.sql.repair_qualifiers, relmem.sql.repair_joins, then relmem.sql.repair_counts,
as the pipeline's repair stages apply them) would have done to the queries of earlier evaluation runs, without an
LLM.

    python scripts/replay_static_repairs.py docs/eval/llm/relmem-kept-gate.jsonl docs/eval/llm/gold-ddl.jsonl \
        --set docs/eval/llm/set.jsonl --dbs ../shared/data/spider/database [--repair qualifiers|joins|counts|both|all]

(both: qualifiers, then joins; all: the three.)

Per run file (the output of `relmem eval run`, read only), three groups of queries: the final queries that failed
(with how many failed on a qualified column SQLite does not find, and on any column it does not find), all final
queries, and the queries as the plan wrote them (what the repair stages see). For each: how many there are, how many
failed, how many the SQL parser cannot read, how many the repairs change, how many of the changed ones then execute,
and how many of those return the gold rows of their database's part (relmem.eval.metrics.part_executions, the run's
execution accuracy). For the final queries, "parts" also gives the set's parts answered with the gold rows before
and after replacing each changed query's result by the repaired one's. Prints JSON.
"""
import argparse
import json
import re

from relmem import Error
from relmem import sql as sqltools
from relmem.agent import PipelineConfig
from relmem.engines import open_catalog
from relmem.eval.items import load_set
from relmem.eval.metrics import part_executions
from relmem.eval.report import load_run
from relmem.typed_json import json_rows


QUALIFIED_UNKNOWN = re.compile(r"no such column: [^.\s]+\.")  # SQLite's error for "T2.weight" that T2 lacks
REPAIRS = {"qualifiers": (sqltools.repair_qualifiers,), "joins": (sqltools.repair_joins,),
           "counts": (sqltools.repair_counts,), "both": (sqltools.repair_qualifiers, sqltools.repair_joins),
           "all": (sqltools.repair_qualifiers, sqltools.repair_joins, sqltools.repair_counts)}


class Replay:
    def __init__(self, catalog, repairs):
        self.catalog = catalog
        self.repairs = repairs
        self.config = PipelineConfig()
        self.outcomes = {}  # (database, sql) -> {"database", "sql", "rows", "error"}

    def run(self, database, sql):
        """The query's result as a run's record holds it."""
        key = (database, sql)
        if key not in self.outcomes:
            result = self.catalog.execute(database, sql, timeout=self.config.timeout, max_rows=self.config.max_rows)
            self.outcomes[key] = {"database": database, "sql": sql, "rows": json_rows(result.rows) if result.ok else [],
                                  "error": None if result.ok else f"{result.error_kind}: {result.error}"}
        return self.outcomes[key]

    def repair(self, database, sql):
        """(the repaired query, how many repairs) after each repair in turn; None when the parser cannot read it."""
        made = 0
        for repair in self.repairs:
            try:
                result = repair(sql, self.catalog, database)
            except Error:
                return None
            sql, made = result.sql, made + len(result.repairs)
        return sql, made


def gold_match(item, result):
    """Whether `result` returns the gold rows of the item's part on its database."""
    return any(part_executions(item, [result])[i] for i, part in enumerate(item.parts)
               if part.database == result["database"])


def new_counts():
    return {"queries": 0, "failed": 0, "unreadable": 0, "changed": 0, "changed_failed": 0, "changed_then_execute": 0,
            "changed_then_match_gold": 0}


def count(counts, replay, item, database, sql, failed):
    """Adds one query; returns the repaired query's result when the repair changed it."""
    counts["queries"] += 1
    counts["failed"] += failed
    repair = replay.repair(database, sql)
    counts["unreadable"] += repair is None
    if repair is None or not repair[1]:
        return None
    result = replay.run(database, repair[0])
    counts["changed"] += 1
    counts["changed_failed"] += failed
    counts["changed_then_execute"] += result["error"] is None
    counts["changed_then_match_gold"] += result["error"] is None and gold_match(item, result)
    return result


def planned_queries(record):
    for step in record.get("trace") or []:
        if step["stage"] == "plan":
            return step["decision"].get("targets") or []
    return []


def replay_run(path, items, replay):
    records = load_run(path)
    failed_finals = {**new_counts(), "qualified_unknown_column": 0, "unknown_column": 0}
    finals, planned = new_counts(), new_counts()
    parts = {"parts": 0, "gold_before": 0, "gold_after": 0}
    changes = []
    for record in records:
        item = items[record["id"]]
        results = record.get("results") or []
        after = []
        for result in results:
            failed = bool(result.get("error"))
            fixed = count(finals, replay, item, result["database"], result["sql"], failed)
            if failed:
                count(failed_finals, replay, item, result["database"], result["sql"], True)
                failed_finals["qualified_unknown_column"] += bool(QUALIFIED_UNKNOWN.search(result["error"]))
                failed_finals["unknown_column"] += "no such column" in result["error"]
            after.append(fixed or result)
            if fixed is not None:
                changes.append({"id": record["id"], "database": result["database"], "sql": result["sql"],
                                "repaired": fixed["sql"], "error_before": result.get("error"),
                                "error_after": fixed["error"], "gold_rows": gold_match(item, fixed)})
        for target in planned_queries(record):
            ran = replay.run(target["database"], target["sql"])
            count(planned, replay, item, target["database"], target["sql"], ran["error"] is not None)
        parts["parts"] += len(item.parts)
        parts["gold_before"] += sum(part_executions(item, results))
        parts["gold_after"] += sum(part_executions(item, after))
    run = records[0]["run"] if records else {}
    return {"run": path, "label": run.get("label"), "llm": run.get("llm"), "records": len(records),
            "failed_final_queries": failed_finals, "all_final_queries": finals, "planned_queries": planned,
            "parts": parts, "changes": changes}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", metavar="RUN.jsonl")
    parser.add_argument("--set", required=True, dest="set_path", metavar="SET.jsonl")
    parser.add_argument("--dbs", required=True, action="append", metavar="SOURCE")
    parser.add_argument("--repair", choices=sorted(REPAIRS), default="both")
    args = parser.parse_args()
    items = {item.id: item for item in load_set(args.set_path)}
    replay = Replay(open_catalog(args.dbs), REPAIRS[args.repair])
    print(json.dumps([replay_run(path, items, replay) for path in args.runs], indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
