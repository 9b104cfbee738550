"""Scores of one evaluated item (a line of `relmem eval run`'s output), from its gold and what the pipeline did."""
from .answers import (choice_answer_correct, chosen_question, rows_answer_correct, rows_match, text_answer_correct,
                      text_contains)
from .items import Item

REFUSAL = "could not answer"  # how the pipeline begins an answer it could not give; never a correct one


def answer_correct(item, answer):
    """Whether the final answer text answers the item (see relmem.eval.answers for the matching rules)."""
    if answer.startswith(REFUSAL):
        return False
    kind = item.answer["type"]
    if kind == "text":
        return text_answer_correct(answer, item.answer["accepted"])
    if kind == "choice":
        return choice_answer_correct(answer, item.answer["choices"], item.answer["key"])
    if kind == "rows":
        return rows_answer_correct(answer, item.parts[0].rows, item.parts[0].ordered)
    if kind == "larger":
        return chosen_question(answer) == item.answer["question"]
    return all(text_contains(answer, value) for part in item.parts for row in part.rows for value in row)


def part_executions(item, results):
    """Per part, whether the pipeline's query on the part's database returned the gold rows."""
    outcomes = []
    for part in item.parts:
        result = next((r for r in results if r["database"] == part.database), None)
        outcomes.append(bool(result) and not result.get("error")
                        and rows_match(result["rows"], part.rows, part.ordered))
    return outcomes


def selection_scores(gold, chosen):
    """(precision, recall, F1) of a chosen set of databases against the gold set."""
    gold, chosen = set(gold), set(chosen)
    hits = len(gold & chosen)
    precision = hits / len(chosen) if chosen else 0.0
    recall = hits / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return precision, recall, f1


def score(record):
    """{"group", "answer", "parts" [bool], "before"/"after" (P, R, F1) or None, "context_switch" bool or None,
    "seconds", "llm_calls", "tokens" {stage: {...}}} for one output line."""
    item = Item.from_dict(record["item"])
    scored = {"group": item.group, "answer": answer_correct(item, record.get("answer") or ""),
              "parts": part_executions(item, record.get("results") or []), "before": None, "after": None,
              "context_switch": None, "seconds": record.get("seconds", 0.0),
              "llm_calls": sum(t["calls"] for t in record.get("tokens", {}).values()),
              "tokens": record.get("tokens", {}), "checks": record.get("checks"),
              "local_model": record.get("local_model")}
    if item.parts and record.get("candidates") is not None and (record.get("candidates") or record.get("planned")):
        scored["before"] = selection_scores(item.databases, record["candidates"])
        scored["after"] = selection_scores(item.databases, record.get("planned") or [])
    if record.get("needs_data") is not None:
        scored["context_switch"] = record["needs_data"] == bool(item.parts)
    return scored
