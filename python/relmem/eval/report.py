"""`relmem eval report`: the paper's tables from one or more run outputs, side by side.

Per run and per group of items (zero, single, value, double, multi-2, multi-3, and all): answer accuracy, execution
accuracy of each part's SQL, database selection precision/recall/F1 before (the selection stage's candidates) and
after (the databases the LLM's plan used) the LLM's refinement, context-switch accuracy, LLM calls, tokens and
seconds per question; tokens per stage. Later runs are also shown as differences from the first.
"""
import json
import os
from statistics import mean

from .. import Error, outputs
from .gold_simulator import NAME as SIMULATOR
from .metrics import score

GROUP_ORDER = ("zero", "single", "value", "double", "multi-2", "multi-3", "all")
SIMULATOR_NOTE = ("gold simulator: what relmem's memories and stages allow a perfect SQL writer to reach, "
                  "not an LLM's accuracy")


def load_run(path):
    """The records of one output file (a last line cut short is ignored)."""
    records = read_json_lines(path)
    if not records:
        raise Error(f"{path} holds no evaluation records")
    return records


def read_json_lines(path):
    """The JSON objects of a file written line by line as items finish (a last line cut short is ignored)."""
    records = []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as error:
        raise Error(f"cannot read {path}: {error.strerror}") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            if number == len(lines):
                continue
            raise Error(f"{path}, line {number} is not valid JSON") from None
    return records


def _mean(values):
    values = [v for v in values if v is not None]
    return round(mean(values), 4) if values else None


def _selection(scores, which):
    found = [s[which] for s in scores if s[which] is not None]
    if not found:
        return None
    return {name: round(mean(v[i] for v in found), 4) for i, name in enumerate(("precision", "recall", "f1"))}


def _group_metrics(scores):
    return {"n": len(scores),
            "answer_accuracy": _mean([float(s["answer"]) for s in scores]),
            "judged_accuracy": _mean([None if s.get("judged") is None else float(s["judged"]) for s in scores]),
            "execution_accuracy": _mean([float(ok) for s in scores for ok in s["parts"]]),
            "selection_before": _selection(scores, "before"),
            "selection_after": _selection(scores, "after"),
            "context_switch_accuracy": _mean([None if s["context_switch"] is None else float(s["context_switch"])
                                              for s in scores]),
            "llm_calls": _mean([s["llm_calls"] for s in scores]),
            "prompt_tokens": _mean([sum(t["prompt_tokens"] for t in s["tokens"].values()) for s in scores]),
            "completion_tokens": _mean([sum(t["completion_tokens"] for t in s["tokens"].values()) for s in scores]),
            "evaluated_prompt_tokens": _mean([_evaluated(s["local_model"]) for s in scores if s.get("local_model")]),
            "seconds": _mean([s["seconds"] for s in scores]),
            **_check_rates(scores)}


def _evaluated(local_model):
    return local_model["prompt_tokens"] - local_model["reused_prompt_tokens"]


def _check_rates(scores):
    """Shares of LLM replies that did not parse, and of queries that failed or named an unknown table or column."""
    checks = [s["checks"] for s in scores if s.get("checks")]
    calls = sum(c["llm_calls"] for c in checks)
    queries = sum(c["queries"] for c in checks)
    named = [c for c in checks if "unknown_names" in c]
    return {"unparseable_rate": round(sum(c["unparseable"] for c in checks) / calls, 4) if calls else None,
            "failed_query_rate": round(sum(c["failed_queries"] for c in checks) / queries, 4) if queries else None,
            "unknown_name_rate": (round(sum(c["unknown_names"] for c in named) / sum(c["queries"] for c in named), 4)
                                  if named and sum(c["queries"] for c in named) else None)}


def _stage_tokens(scores):
    stages = {}
    for s in scores:
        for stage, tokens in s["tokens"].items():
            total = stages.setdefault(stage, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
            for key in total:
                total[key] += tokens.get(key, 0)
    return {stage: {key: round(value / len(scores), 2) for key, value in total.items()}
            for stage, total in sorted(stages.items())}


def summarize(path, judgements=None):
    """One run's figures: {"file", "label", "simulated", "judge", "groups": {group: metrics}, "stages": {stage: per
    question}}. `judgements`: {(label, id): judgement} of relmem.eval.judge; a judged record also scores
    "judged_accuracy", and "judge" names the judge."""
    records = load_run(path)
    scores = [score(record) for record in records]
    judges = set()
    for record, scored in zip(records, scores):
        label = (record.get("run") or {}).get("label") or os.path.basename(path)
        judgement = (judgements or {}).get((label, record["id"]))
        scored["judged"] = judgement["correct"] if judgement else None
        if judgement:
            judges.add(judgement["judge"])
    groups = {}
    for s in scores:
        groups.setdefault(s["group"], []).append(s)
    groups["all"] = scores
    run = records[0].get("run") or {}
    return {"file": path, "label": run.get("label") or os.path.basename(path),
            "simulated": any((r.get("run") or {}).get("llm") == SIMULATOR for r in records),
            "judge": ", ".join(sorted(judges)) or None,
            "groups": {g: _group_metrics(groups[g]) for g in sorted(groups, key=_group_rank)},
            "stages": _stage_tokens(scores)}


def _group_rank(group):
    return GROUP_ORDER.index(group) if group in GROUP_ORDER else len(GROUP_ORDER)


def title(runs):
    head = "relmem evaluation"
    return f"{head} ({SIMULATOR_NOTE})" if any(run["simulated"] for run in runs) else head


def report(paths, judged=()):
    """The figures of each run output in `paths`; `judged`: judgement files of `relmem eval judge` for them."""
    from .judge import load_judgements
    judgements = {}
    for path in judged:
        judgements.update(load_judgements(path))
    runs = [summarize(path, judgements) for path in paths]
    return {"title": title(runs), "runs": runs}


# --- markdown ----------------------------------------------------------------------------------------------------

def _cell(value, base=None, digits=3):
    if value is None:
        return "–"
    text = f"{value:.{digits}f}" if isinstance(value, float) else str(value)
    if base is not None and value != base and isinstance(value, (int, float)):
        text += f" ({value - base:+.{digits}f})"
    return text


def _groups(runs):
    return sorted({g for run in runs for g in run["groups"]}, key=_group_rank)


def _metric_table(runs, metric, digits=3, pick=None):
    groups = _groups(runs)
    lines = ["| group | n | " + " | ".join(run["label"] for run in runs) + " |",
             "| --- | --- |" + " --- |" * len(runs)]
    for group in groups:
        values = []
        for run in runs:
            metrics = run["groups"].get(group)
            value = metrics.get(metric) if metrics else None
            values.append(pick(value) if pick and value is not None else value)
        sizes = sorted({run["groups"][group]["n"] for run in runs if group in run["groups"]})
        n = f"{sizes[0]}–{sizes[-1]}" if len(sizes) > 1 else sizes[0]  # runs of other sizes: the range
        lines.append(f"| {group} | {n} | " + " | ".join(_cell(v, values[0] if i else None, digits)
                                                     for i, v in enumerate(values)) + " |")
    return lines


def _selection_table(run):
    lines = ["| group | precision before | recall before | F1 before | precision after | recall after | F1 after |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for group, metrics in run["groups"].items():
        before, after = metrics["selection_before"], metrics["selection_after"]
        if before is None:
            continue
        lines.append(f"| {group} | " + " | ".join(_cell(s[k]) for s in (before, after)
                                                 for k in ("precision", "recall", "f1")) + " |")
    return lines


def _stage_table(runs):
    stages = sorted({stage for run in runs for stage in run["stages"]})
    lines = ["| stage | " + " | ".join(f"{run['label']}: calls / prompt / completion" for run in runs) + " |",
             "| --- |" + " --- |" * len(runs)]
    for stage in stages:
        cells = []
        for run in runs:
            t = run["stages"].get(stage)
            cells.append(f"{t['calls']:.2f} / {t['prompt_tokens']:.0f} / {t['completion_tokens']:.0f}" if t else "–")
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    return lines


def markdown(result):
    runs = result["runs"]
    out = [f"# {result['title']}", ""]
    out += ["Runs: " + "; ".join(f"**{run['label']}** (`{run['file']}`)" for run in runs), ""]
    if len(runs) > 1:
        out += [f"Differences in brackets are from the first run, **{runs[0]['label']}**.", ""]
    judges = sorted({run["judge"] for run in runs if run["judge"]})
    judged = [(f"Answer accuracy, LLM judge ({'; '.join(judges)})", "judged_accuracy", 3)] if judges else []
    sections = [("Answer accuracy (exact and numeric match)", "answer_accuracy", 3), *judged,
                ("Execution accuracy (each part's SQL against its gold)", "execution_accuracy", 3),
                ("Context-switch accuracy", "context_switch_accuracy", 3),
                ("Database selection F1 before the LLM's refinement", "selection_before", 3),
                ("Database selection F1 after the LLM's refinement", "selection_after", 3),
                ("LLM calls per question", "llm_calls", 2), ("Prompt tokens per question", "prompt_tokens", 0),
                ("Prompt tokens the local model evaluated per question (the rest reused from its KV cache)",
                 "evaluated_prompt_tokens", 0),
                ("Completion tokens per question", "completion_tokens", 0), ("Seconds per question", "seconds", 3),
                ("LLM replies that did not parse (share of calls)", "unparseable_rate", 4),
                ("Queries that failed to execute (share of queries)", "failed_query_rate", 4),
                ("Queries naming a table or column their database lacks (share of queries)", "unknown_name_rate", 4)]
    for heading, metric, digits in sections:
        pick = (lambda s: s["f1"]) if metric.startswith("selection") else None
        out += [f"## {heading}", ""] + _metric_table(runs, metric, digits, pick) + [""]
    for run in runs:
        out += [f"## Database selection of {run['label']} (the paper's Table 3)", ""] + _selection_table(run) + [""]
    out += ["## Tokens per question by stage", ""] + _stage_table(runs) + [""]
    return "\n".join(out)


# --- plots ---------------------------------------------------------------------------------------------------------

PLOTS = {"answer_accuracy": "Answer accuracy", "execution_accuracy": "Execution accuracy",
         "selection_after": "Database selection F1 after refinement", "prompt_tokens": "Prompt tokens per question"}


def plot(result, folder):
    """One grouped bar plot per metric in PLOTS (groups on the x axis, one bar per run); returns the file paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    outputs.make_folder(folder, "--plots")
    runs, groups = result["runs"], _groups(result["runs"])
    paths = []
    for metric, heading in PLOTS.items():
        figure, axes = plt.subplots(figsize=(max(6, 1.4 * len(groups) * max(1, len(runs)) ** 0.5), 3.8))
        width = 0.8 / len(runs)
        for i, run in enumerate(runs):
            values = []
            for group in groups:
                value = (run["groups"].get(group) or {}).get(metric)
                values.append((value["f1"] if isinstance(value, dict) else value) or 0.0)
            axes.bar([g + (i - (len(runs) - 1) / 2) * width for g in range(len(groups))], values, width,
                     label=run["label"])
        axes.set_xticks(range(len(groups)), groups)
        axes.set_ylabel(heading)
        if not metric.endswith("tokens"):
            axes.set_ylim(0, 1.05)
        axes.set_title(heading + (" (gold simulator, not an LLM)" if any(r["simulated"] for r in runs) else ""),
                       fontsize=10)
        axes.legend(fontsize=7, loc="lower left" if not metric.endswith("tokens") else "upper left")
        figure.tight_layout()
        path = os.path.join(folder, f"{metric}.png")
        with outputs.new_file(path, "--plots") as temporary:
            figure.savefig(temporary, dpi=110, format="png")
        plt.close(figure)
        paths.append(path)
    return paths
