"""Composes an evaluation set the way the seed paper does: questions that need no database (SQuAD v2 answerable
questions with their passage, CommonsenseQA), single-database questions (Spider dev), two-database comparisons in
the paper's template and plainly concatenated questions on 2-3 databases. Every part keeps its gold SQL and the rows
that SQL returns, so the set is self-contained."""
import json
import os
import random

from .. import Catalog, Error, compose_question
from .items import Item, Part, load_set

DEFAULT_SHARES = {"zero": 0.2, "single": 0.4, "double": 0.2, "multi": 0.2}
KINDS = (*DEFAULT_SHARES, "value")  # value questions only when asked for: they need value cases
# Ways of writing a stored value otherwise that a value question may use (scripts/make_value_cases.py categories);
# "unchanged" is no mismatch and "absent" has no stored value to find.
VALUE_CATEGORIES = ("case", "typo", "abbreviation", "expansion", "synonym", "semantic", "dropped_token",
                    "punctuation", "spacing", "inflection", "accent")
MULTI_MAX_CELLS = 10  # a part of a concatenated question must be answerable in a sentence
GOLD_MAX_ROWS = 1000


def parse_counts(specs, default_total=500):
    """{kind: count} from --n values: one total ("500", split by DEFAULT_SHARES) or kind=count pairs
    ("single=200", also comma-separated)."""
    pairs = [piece.strip() for spec in specs or [] for piece in str(spec).split(",") if piece.strip()]
    if not pairs:
        pairs = [str(default_total)]
    if len(pairs) == 1 and "=" not in pairs[0]:
        total = _count(pairs[0], "--n")
        counts = {kind: int(round(total * share)) for kind, share in DEFAULT_SHARES.items()}
        counts["single"] += total - sum(counts.values())
        return counts
    counts = dict.fromkeys(DEFAULT_SHARES, 0)
    for pair in pairs:
        kind, _, value = pair.partition("=")
        if kind not in KINDS or not value:
            raise Error(f"--n {pair!r}: expected a total or kind=count with kind one of {', '.join(KINDS)}")
        counts[kind] = _count(value, f"--n {kind}")
    return counts


def _count(text, what):
    try:
        value = int(text)
    except ValueError:
        raise Error(f"{what}: {text!r} is not a whole number") from None
    if value < 0:
        raise Error(f"{what} must be >= 0")
    return value


def _read_json(path, lines=False):
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()] if lines else json.load(f)
    except OSError as error:
        raise Error(f"cannot read {path}: {error.strerror}") from None
    except ValueError as error:
        raise Error(f"{path} is not valid JSON: {error}") from None


def _sentence(question):
    question = " ".join(question.split())
    return question if question[-1:] in "?.!" else question + "?"


def spider_parts(spider_dir, catalog=None, questions="dev.json"):
    """Every question of the Spider file `questions` whose gold SQL returns rows (not all NULL) within the row cap,
    as Part."""
    entries = _read_json(os.path.join(spider_dir, questions))
    catalog = catalog or Catalog(os.path.join(spider_dir, "database"))
    parts = []
    for entry in entries:
        db, sql = entry.get("db_id"), " ".join(str(entry.get("query", "")).split())
        if db not in catalog or not sql:
            continue
        result = catalog.execute(db, sql, timeout=30.0, max_rows=GOLD_MAX_ROWS + 1)
        rows = [list(row) for row in result.rows] if result.ok else []
        if not rows or len(rows) > GOLD_MAX_ROWS or all(v is None for row in rows for v in row):
            continue
        if any(isinstance(v, (bytes, bytearray)) for row in rows for v in row):
            continue
        parts.append(Part(_sentence(entry["question"]), db, sql, rows, "order by" in sql.lower()))
    if not parts:
        raise Error(f"no usable Spider question in {spider_dir} ({questions} and database/ are needed)")
    return parts


def squad_items(zero_dir):
    folder = os.path.join(zero_dir, "squad2_sample")
    queries = _read_json(os.path.join(folder, "queries.json"))
    truth = _read_json(os.path.join(folder, "ground_truth.json"))
    items = []
    for query in queries.get("queries", []) if isinstance(queries, dict) else []:
        gold = truth.get(query.get("id"), {})
        answers = [a for a in gold.get("answers", []) if a.strip()]
        if gold.get("is_impossible") or not answers:
            continue
        question = (f"Read the passage and answer the question.\nPassage: {' '.join(query['context'].split())}\n"
                    f"Question: {_sentence(query['question'])}")
        items.append(Item("", "zero", question, {"type": "text", "accepted": sorted(set(answers), key=answers.index)},
                          source=f"squad2_sample/{query['id']}"))
    return items


def commonsense_items(zero_dir):
    items = []
    for entry in _read_json(os.path.join(zero_dir, "commonsenseqa", "dev_rand_split.jsonl"), lines=True):
        choices = dict(zip(entry["choices"]["label"], entry["choices"]["text"]))
        if entry.get("answerKey") not in choices:
            continue
        listed = ", ".join(f"{label}) {text}" for label, text in choices.items())
        question = f"{_sentence(entry['question'])} Choose one answer: {listed}."
        items.append(Item("", "zero", question, {"type": "choice", "choices": choices, "key": entry["answerKey"]},
                          source=f"commonsenseqa/{entry['id']}"))
    return items


def switch_questions(spider_dir, zero_dir, count, seed=0, exclude=()):
    """Questions to fit or measure a context switch on, none from Spider dev: {"train_spider": count questions of
    train_spider.json, "zero_db": count zero_db questions (as squad_items and commonsense_items write them) that no
    set of `exclude` (SET.jsonl paths) holds}, each drawn with `seed`."""
    train = [entry["question"] for entry in _read_json(os.path.join(spider_dir, "train_spider.json"))]
    held_out = {item.source for path in exclude for item in load_set(path)}
    zero = [item.question for item in squad_items(zero_dir) + commonsense_items(zero_dir) if item.source not in held_out]
    random.Random(seed).shuffle(train)
    random.Random(seed).shuffle(zero)
    return {"train_spider": train[:count], "zero_db": zero[:count]}


def _sample(rng, pool, count, what):
    if count > len(pool):
        raise Error(f"asked for {count} {what} but only {len(pool)} are available")
    return rng.sample(pool, count)


def _numeric(part):
    value = part.rows[0][0] if len(part.rows) == 1 and len(part.rows[0]) == 1 else None
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _distinct_databases(rng, pool, size, seen, attempts=10000):
    """`size` parts on different databases, a combination not drawn before; None when none is found."""
    for _ in range(attempts):
        chosen = rng.sample(pool, size)
        key = tuple(sorted(id(p) for p in chosen))
        if len({p.database for p in chosen}) == size and key not in seen:
            seen.add(key)
            return chosen
    return None


def double_items(rng, parts, count):
    pool = [p for p in parts if _numeric(p)]
    items, seen = [], set()
    while len(items) < count:
        chosen = _distinct_databases(rng, pool, 2, seen)
        if chosen is None:
            raise Error(f"only {len(items)} two-database comparisons can be composed (asked for {count})")
        a, b = (p.rows[0][0] for p in chosen)
        if a == b:
            continue
        question = compose_question([p.question for p in chosen], "larger-number")
        items.append(Item("", "double", question, {"type": "larger", "question": 1 if a > b else 2}, chosen))
    return items


def multi_items(rng, parts, count):
    pool = [p for p in parts if len(p.rows) * len(p.rows[0]) <= MULTI_MAX_CELLS]
    items, seen = [], set()
    for i in range(count):
        chosen = _distinct_databases(rng, pool, 2 + i % 2, seen)
        if chosen is None:
            raise Error(f"only {len(items)} multi-part questions can be composed (asked for {count})")
        question = compose_question([p.question for p in chosen], "concatenate")
        items.append(Item("", "multi", question, {"type": "parts"}, chosen))
    return items


def value_items(rng, value_cases, catalog, count):
    """Spider dev questions whose literal is written as a value case writes it ("female" for 'F', "usa" for 'USA'):
    the question with the stored value replaced by the case's way of writing it; the gold SQL keeps the stored one.
    `value_cases`: the JSONL of scripts/make_value_cases.py."""
    pool = []
    for case in _read_json(value_cases, lines=True):
        if case.get("split") != "dev" or case.get("category") not in VALUE_CATEGORIES or not case.get("gold_value"):
            continue
        question, gold = case["question"], str(case["gold_value"])
        at = question.lower().find(gold.lower())
        if at < 0 or case["db_id"] not in catalog:
            continue
        result = catalog.execute(case["db_id"], case["gold_sql"], timeout=30.0, max_rows=GOLD_MAX_ROWS + 1)
        rows = [list(row) for row in result.rows] if result.ok else []
        if not rows or len(rows) > GOLD_MAX_ROWS or all(v is None for row in rows for v in row):
            continue
        written = _sentence(question[:at] + str(case["perturbed_value"]) + question[at + len(gold):])
        part = Part(written, case["db_id"], case["gold_sql"], rows, "order by" in case["gold_sql"].lower())
        pool.append(Item("", "value", written, {"type": "rows"}, [part],
                         source=f"value_cases/{case['category']}/{case['db_id']}"))
    return _sample(rng, pool, count, f"value questions (dev cases of {value_cases})")


def build_set(spider_dir, zero_dir, counts, seed=0, catalog=None, value_cases=None, questions="dev.json"):
    """The items, in kind order, with ids like "single-0007". `counts`: {kind: n} (see parse_counts); "value"
    items need `value_cases` (scripts/make_value_cases.py's output). Single, double and multi items are drawn from
    the Spider file `questions`: dev.json to evaluate, train_spider.json to choose settings without reading dev."""
    rng = random.Random(seed)
    items = []
    if counts.get("zero"):
        squad, commonsense = squad_items(zero_dir), commonsense_items(zero_dir)
        half = counts["zero"] // 2
        items += _sample(rng, squad, half, "SQuAD questions") + \
            _sample(rng, commonsense, counts["zero"] - half, "CommonsenseQA questions")
    if any(counts.get(kind) for kind in ("single", "double", "multi")):
        parts = spider_parts(spider_dir, catalog, questions)
        for part in _sample(rng, parts, counts.get("single", 0), f"questions of {questions}"):
            items.append(Item("", "single", part.question, {"type": "rows"}, [part]))
        items += double_items(rng, parts, counts.get("double", 0))
        items += multi_items(rng, parts, counts.get("multi", 0))
    if counts.get("value"):
        if value_cases is None:
            raise Error("value questions need --value-cases (the output of scripts/make_value_cases.py)")
        items += value_items(rng, value_cases, catalog or Catalog(os.path.join(spider_dir, "database")),
                             counts["value"])
    numbers = {}
    for item in items:
        numbers[item.kind] = numbers.get(item.kind, 0) + 1
        item.id = f"{item.kind}-{numbers[item.kind]:04d}"
        item.source = item.source or f"spider/{questions}"
    return items
