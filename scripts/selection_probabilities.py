"""Whether the selection memory's probabilities read as probabilities, for a calibration objective.

    python scripts/selection_probabilities.py --spider ../shared/data/spider --zero-db ../shared/data/zero_db \
        --objective likelihood

Builds the untrained memory on every Spider database, calibrates it on train_spider.json as `relmem bench selection`
does, then reports on dev: the share of questions whose database gets p >= 0.8, the share whose best wrong database
gets p < 0.5, recall@1 and set F1 (select_set, at least the best database); and for the first --count questions of
SQuAD 2.0's sample and of CommonsenseQA's dev split (questions no database answers), the share whose best database
gets p < 0.5, which is the share select_set(at_least_one=False) leaves empty. Measures only: nothing is fitted on
dev or zero_db.
"""
import argparse
import json
import os

from relmem.bench import selection as bench
from relmem.encoders import default_encoder_name, load_encoder
from relmem.engines import open_catalog

HAMLET = "Who wrote the play Hamlet?"


def no_database_questions(zero_db, count):
    with open(os.path.join(zero_db, "squad2_sample", "queries.json")) as f:
        squad = [q["question"] for q in json.load(f)["queries"]][:count]
    with open(os.path.join(zero_db, "commonsenseqa", "dev_rand_split.jsonl")) as f:
        commonsense = [json.loads(line)["question"] for line in f if line.strip()][:count]
    return {"squad": squad, "commonsenseqa": commonsense}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spider", required=True)
    parser.add_argument("--zero-db", required=True)
    parser.add_argument("--objective", default="f1", choices=["f1", "likelihood"])
    parser.add_argument("--count", type=int, default=500)
    args = parser.parse_args()
    memory, _ = bench.build_memory(open_catalog(os.path.join(args.spider, "database")),
                                   load_encoder(default_encoder_name()), None, False)
    dev = bench.load_questions(os.path.join(args.spider, "dev.json"))
    out = {"calibration": bench.calibrate(memory, os.path.join(args.spider, "train_spider.json"), dev, 0,
                                          objective=args.objective)}
    everything = len(memory)
    right_confident = wrong_below = 0
    for text, dbs in dev:
        ranking = memory.select(text, everything)
        right_confident += max(m.probability for m in ranking if m.database in dbs) >= 0.8
        wrong_below += max(m.probability for m in ranking if m.database not in dbs) < 0.5
    out["dev"] = {"n": len(dev), "right_p_ge_0.8": right_confident / len(dev), "best_wrong_p_lt_0.5": wrong_below / len(dev),
                  "selects_none": sum(not s for s in memory.select_set_batch([t for t, _ in dev], at_least_one=False))
                  / len(dev),
                  **bench.evaluate(memory, dev, [1, 5], False)}
    for name, texts in no_database_questions(args.zero_db, args.count).items():
        best = [memory.select(text, 1)[0].probability for text in texts]
        out[name] = {"n": len(texts), "best_p_lt_0.5": sum(p < 0.5 for p in best) / len(texts),
                     "selects_none": sum(not s for s in memory.select_set_batch(texts, at_least_one=False))
                     / len(texts)}
    top = memory.select(HAMLET, 1)[0]
    out["hamlet"] = {"best": top.database, "p": top.probability,
                     "selected": [m.database for m in memory.select_set(HAMLET, at_least_one=False)]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
