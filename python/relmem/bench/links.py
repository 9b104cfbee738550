"""The value memory's question links (ValueMemory.link) on questions with gold SQL, in each question's gold database:
how many links a question gets and how many of the gold SQL's string literals they name.

    OMP_NUM_THREADS=1 relmem bench links --dbs ../shared/data/spider/database \
        --questions ../shared/data/spider/dev.json --json

Only the databases the questions ask are indexed. literals_linked: the share of the gold SQL's string literals
(LIKE's % wildcards stripped; questions whose gold SQL does not parse are skipped) that the stored value of some link equals, ignoring case. links_per_question: links at
the default min_score. by_channel: links per evidence channel ("exact", "abbreviation", "country", "alias", ...),
"gold" when the linked value is one of the question's gold literals and "other" when not. Most "other" links are
noise; some are right values that the gold SQL reaches another way, such as a country's code beside its name.
ms_per_question: ValueMemory.link alone, after one warm-up question. --every N keeps every Nth question (Spider train
has 7,000).
"""
import collections
import time

from .. import Catalog, Error
from ..encoders import DEFAULT_CHAIN, load_encoder
from ..values import ValueMemory
from .context import gold_schema, load_gold


def add_arguments(parser):
    parser.add_argument("--dbs", required=True, help="folder of SQLite databases (e.g. spider/database)")
    parser.add_argument("--questions", required=True, help="JSON list of {question, db_id, query}")
    parser.add_argument("--every", type=int, default=1, help="keep every Nth question")
    parser.add_argument("--encoder", default=None, help=f"encoder spec (default: {DEFAULT_CHAIN})")


def run(args):
    full = Catalog(args.dbs)
    questions = [q for q in load_gold(args.questions)[::max(1, args.every)] if q[1] in full]
    catalog = Catalog([full.path(db) for db in sorted({db for _, db, _ in questions})])
    encoder = load_encoder(args.encoder)
    memory = ValueMemory.build(catalog, encoder)
    if questions:
        memory.link(questions[0][1], questions[0][0])  # loads the meaning channels' lexicon once

    links = literals = linked = skipped = 0
    by_channel = collections.Counter()
    seconds = 0.0
    for question, db, sql in questions:
        try:
            gold = {literal.lower() for literal in gold_schema(catalog, db, sql)[2]}
        except Error:
            skipped += 1
            continue
        start = time.perf_counter()
        found = memory.link(db, question)
        seconds += time.perf_counter() - start
        values = {link.value.lower() for link in found}
        links += len(found)
        literals += len(gold)
        linked += len(gold & values)
        by_channel.update(f"{link.channel}:{'gold' if link.value.lower() in gold else 'other'}" for link in found)
    n = len(questions) - skipped
    return {"benchmark": "links", "encoder": encoder.name, "databases": len(catalog), "questions": n,
            "skipped_unparsed": skipped,
            "links_per_question": round(links / n, 4) if n else None,
            "literals": literals, "literals_linked": round(linked / literals, 4) if literals else None,
            "by_channel": dict(sorted(by_channel.items())),
            "ms_per_question": round(1e3 * seconds / n, 3) if n else None}
