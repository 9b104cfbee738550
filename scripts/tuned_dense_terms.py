"""Whether a fine-tuned encoder pays for itself as a second source of the dense terms.

    python scripts/tuned_dense_terms.py --spider ../shared/data/spider --model $RELMEM_HOME/models/minilm-card-cosine

Builds the selection memory twice on every Spider database, on untrained MiniLM and on the fine-tuned model
directory, and ranks the questions of the databases the model's training held out (`heldout_database_names` in its
relevance_head.json; train_spider.json questions only) and their WordNet synonym versions by the untrained score of
the untrained memory's raw similarities, with some dense terms (card, table, question form, column) taken from the
fine-tuned memory, wholly or half. Prints recall@1 and recall@5 per set and variant. The ranking is that of the raw
similarities of each whole question (no split into parts, no calibration), so its recall differs slightly from
`relmem bench selection`'s. Nothing of Spider dev is read.
"""
import argparse
import json
import os

from relmem import SelectionMemory
from relmem.bench.synonyms import synonym_questions
from relmem.encoders import load_encoder
from relmem.engines import open_catalog

WEIGHTS = SelectionMemory.untrained_weights
FIELDS = list(SelectionMemory.raw_fields)
VARIANTS = {  # name: (fields from the fine-tuned memory, their share)
    "untrained": ((), 0.0), "card": (("card",), 1.0), "card, table": (("card", "table"), 1.0),
    "card, table, question form": (("card", "table", "question_form"), 1.0),
    "card, table, question form, column": (("card", "table", "question_form", "column"), 1.0),
    "card, half": (("card",), 0.5), "card, table, half": (("card", "table"), 0.5),
}


def held_out_sets(spider, model, catalog):
    with open(os.path.join(model, "relevance_head.json")) as f:
        held_out = set(json.load(f)["training"]["heldout_database_names"])
    with open(os.path.join(spider, "train_spider.json")) as f:
        questions = [(q["question"], [q["db_id"]]) for q in json.load(f) if q["db_id"] in held_out]
    synonyms = [(text, dbs) for text, dbs, _, _ in synonym_questions(questions, catalog, 0)]
    return {"held-out databases": questions, "their synonym versions": synonyms}


def raw_similarities(memory, questions):
    """Per question: {database: {field: value}} over its candidates."""
    out = []
    for databases, row in memory.similarities([text for text, _ in questions]):
        out.append({db: {f: float(row[f][i]) for f in FIELDS} for i, db in enumerate(databases)})
    return out


def recall_of_scores(questions, scores):
    """recall@1 and recall@5 of [(text, [db])] ranked by their scores [{database: score}]."""
    first = top5 = 0
    for (_, gold), of_question in zip(questions, scores):
        ranked = sorted(of_question, key=lambda db: -of_question[db])
        first += ranked[:1] == gold[:1]
        top5 += gold[0] in ranked[:5]
    return round(first / len(questions), 4), round(top5 / len(questions), 4)


def recall(questions, untrained, tuned, fields, share):
    scores = []
    for plain, fine in zip(untrained, tuned):
        scores.append({})
        for db, terms in plain.items():
            if fields and db not in fine:
                continue
            mixed = dict(terms)
            for f in fields:
                mixed[f] = (1 - share) * terms[f] + share * fine[db][f]
            scores[-1][db] = sum(WEIGHTS[f] * mixed[f] for f in FIELDS)
    return recall_of_scores(questions, scores)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spider", required=True, help="Spider folder (train_spider.json, database/)")
    parser.add_argument("--model", required=True, help="a fine-tuned MiniLM model directory (minilm:DIR)")
    args = parser.parse_args()
    catalog = open_catalog(os.path.join(args.spider, "database"))
    sets = held_out_sets(args.spider, args.model, catalog)
    similarities = {}
    for name, spec in (("untrained", "minilm"), ("tuned", "minilm:" + args.model)):
        memory = SelectionMemory.build(catalog, load_encoder(spec))
        similarities[name] = {s: raw_similarities(memory, questions) for s, questions in sets.items()}
    for s, questions in sets.items():
        for variant, (fields, share) in VARIANTS.items():
            r1, r5 = recall(questions, similarities["untrained"][s], similarities["tuned"][s], fields, share)
            print(json.dumps({"set": s, "n": len(questions), "variant": variant, "recall@1": r1, "recall@5": r5}))


if __name__ == "__main__":
    main()
