"""The main demo job: build the demo collection, embed it, and route example questions to databases."""
import os

from .. import Catalog, VectorIndex
from ..encoders import load_encoder, relmem_home
from .collection import DESCRIPTIONS, build_collection

# (question, the database that answers it, or None when no database does)
QUESTIONS = [
    ("What is the average rating of Italian restaurants in Los Angeles?", "restaurants"),
    ("Which hospitals in San Francisco have a trauma center?", "hospitals"),
    ("What is the population of Seattle and when was it founded?", "world_cities"),
    ("How many female singers are older than 30?", "singers"),
    ("Which employees in the research and development department earn more than 100000?", "employees"),
    ("List flights from Los Angeles to New York cheaper than 300 dollars.", "flights"),
    ("How many computer science students have a GPA above 3.5?", "university"),
    ("Who wrote the play Hamlet?", None),
]


def default_folder():
    return os.path.join(relmem_home(), "demo")


def rank_databases(catalog, encoder, questions, k=3):
    names = catalog.databases
    cards = [catalog.card(db, description=DESCRIPTIONS.get(db, "")) for db in names]
    index = VectorIndex(encoder.dim, "cosine")
    index.add(encoder.encode(cards))
    scores, ids = index.search(encoder.encode(questions), min(k, len(names)))
    return [[(names[i], float(s)) for s, i in zip(row_scores, row_ids) if i >= 0]
            for row_scores, row_ids in zip(scores, ids)]


def run(folder=None, encoder_name=None, out=print):
    folder = folder or default_folder()
    build_collection(folder)
    catalog = Catalog(folder)
    encoder = load_encoder(encoder_name)
    out(f"relmem demo: {len(catalog)} databases in {folder}, encoder {encoder.name}")
    rankings = rank_databases(catalog, encoder, [q for q, _ in QUESTIONS])
    hits = 0
    for (question, expected), ranking in zip(QUESTIONS, rankings):
        out(f"\nQ: {question}")
        for rank, (db, score) in enumerate(ranking, start=1):
            out(f"  {rank}. {db:<14} {score:.3f}")
        if expected is None:
            out("  (no database answers this question)")
        else:
            hits += ranking[0][0] == expected
    answerable = sum(1 for _, expected in QUESTIONS if expected)
    out(f"\nfirst-ranked database correct for {hits} of {answerable} database questions")
    return {"hits": hits, "answerable": answerable, "rankings": rankings}
