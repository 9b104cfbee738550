"""A strict LLM judge of final answers, beside the exact and numeric matching of relmem.eval.answers: the paper judged
answers with GPT-4; any relmem LLM can judge here, and the report names it.

    judgements = judge_run(llm, "relmem.jsonl", "relmem.judged.jsonl")   # resumable: judged ids are kept
    report(["relmem.jsonl"], judged=["relmem.judged.jsonl"])

Each judgement is one line: {"id", "label" (the judged run's), "judge" (the judge LLM), "correct", "reasoning",
"tokens"}. An answer that begins "could not answer" is judged wrong without asking.
"""
import json
import os
from pathlib import Path

from .. import Error, outputs
from ..contracts import CONTRACTS
from ..parsers import StageFailure, ask_with_format
from ..prompt_templates import PromptTemplate
from .items import Item
from .metrics import REFUSAL

PROMPT = PromptTemplate("judge", (Path(__file__).resolve().parent / "judge.txt").read_text(encoding="utf-8"))
SHOWN_ROWS = 20  # gold rows written into the reference; the rest are counted


def _table(rows):
    lines = [" | ".join("NULL" if v is None else str(v) for v in row) for row in rows[:SHOWN_ROWS]]
    if len(rows) > SHOWN_ROWS:
        lines.append(f"... {len(rows) - SHOWN_ROWS} more rows")
    return "\n".join(lines) or "(no rows)"


def reference(item):
    """What a correct answer to `item` says, written for the judge."""
    kind = item.answer["type"]
    if kind == "text":
        return "Any of these answers is correct: " + "; ".join(item.answer["accepted"])
    if kind == "choice":
        key = item.answer["key"]
        return f"The correct choice is ({key}) {item.answer['choices'][key]}."
    if kind == "rows":
        return "The correct answer holds exactly these records:\n" + _table(item.parts[0].rows)
    parts = "\n\n".join(f"Q{i}: {part.question}\nIts records:\n{_table(part.rows)}"
                        for i, part in enumerate(item.parts, start=1))
    if kind == "larger":
        return f"The correct answer is Q{item.answer['question']}.\n\n{parts}"
    return "The correct answer states the records of every part.\n\n" + parts


def judge_record(llm, record):
    """{"correct", "reasoning", "tokens"} for one record of `relmem eval run`."""
    answer = (record.get("answer") or "").strip()
    if not answer or answer.startswith(REFUSAL):
        return {"correct": False, "reasoning": "no answer given", "tokens": {"calls": 0, "prompt_tokens": 0,
                                                                            "completion_tokens": 0}}
    item = Item.from_dict(record["item"])
    contract = CONTRACTS["verdict"]
    messages = PROMPT.render(question=item.question, reference=reference(item), answer=answer,
                             output_form=contract.form)
    trace = []
    try:
        verdict = ask_with_format(llm, messages, contract.reader(), "judge", trace, contract.reminder,
                                  temperature=0.0, max_tokens=160, **contract.constraints())
        reasoning = trace[-1]["output"].splitlines()[0]
    except StageFailure as error:
        verdict, reasoning = False, f"judge failed: {error}"
    usage = [entry["usage"] or {} for entry in trace]
    return {"correct": bool(verdict), "reasoning": reasoning,
            "tokens": {"calls": len(trace), "prompt_tokens": sum(u.get("prompt_tokens", 0) for u in usage),
                       "completion_tokens": sum(u.get("completion_tokens", 0) for u in usage)}}


def load_judgements(path):
    """{(label, id): judgement} of a judgements file (a last line cut short is ignored)."""
    from .report import read_json_lines
    found = {}
    for number, judgement in enumerate(read_json_lines(path), start=1):
        try:
            found[(judgement["label"], judgement["id"])] = judgement
        except (KeyError, TypeError):
            raise Error(f"{path}: judgement {number} lacks its label or id") from None
    return found


def judge_run(llm, run_path, out, judge_name, progress=None):
    """Judges every record of `run_path` not yet judged in `out` (created, or continued when it holds judgements
    of this judge). Returns {"judged", "kept", "correct"} of this call."""
    from .report import load_run
    records = load_run(run_path)
    done = {}
    if os.path.exists(out) and os.path.getsize(out) > 0:
        done = load_judgements(out)
        others = {j["judge"] for j in done.values()} - {judge_name}
        if others:
            raise Error(f"{out} holds judgements of another judge ({', '.join(sorted(others))})")
        file = open(out, "a", encoding="utf-8")
    else:
        file = outputs.open_new_for_append(out)
    judged = correct = 0
    with file:
        for record in records:
            label = (record.get("run") or {}).get("label") or os.path.basename(run_path)
            if (label, record["id"]) in done:
                continue
            judgement = {"id": record["id"], "label": label, "judge": judge_name, **judge_record(llm, record)}
            file.write(json.dumps(judgement, ensure_ascii=False) + "\n")
            file.flush()
            os.fsync(file.fileno())
            judged += 1
            correct += judgement["correct"]
            if progress:
                progress(judgement)
    return {"judged": judged, "kept": len(records) - judged, "correct": correct}
