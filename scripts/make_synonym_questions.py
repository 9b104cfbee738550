#!/usr/bin/env python3
"""Makes a synonym version of Spider questions for `relmem bench selection`: schema words replaced by WordNet synonyms.

Every word of a question whose dictionary form (WordNet's morphy) is a word of its database's table or column names
("singers" for the table singer) is replaced by a synonym from WordNet's two most frequent noun senses of that word
("vocalists"), keeping the plural and the capital, when one exists that is not itself a word of the schema. Words
too common in schemas (id, name, number, ...) and function words stay. Only questions with at least one replacement are written, as a
JSON list like Spider's (question, db_id) with the original question and the replacements beside them:

    .venv/bin/python scripts/make_synonym_questions.py --spider ../shared/data/spider --split dev \\
        --out dev_synonyms.json

The selection memory's synonym expansion draws on the same WordNet (one most frequent sense), so this set measures
how much the expansion recovers of what synonyms cost, optimistically: people's synonyms are not all in WordNet
(Spider-Syn's are written by hand; it is for evaluation only and not used here). Deterministic for a given --seed.
"""
import argparse
import json
import pathlib
import random
import re
import sys

from relmem._relmem import WordNet, identifier_words

COMMON = {"id", "name", "names", "type", "code", "date", "number", "the", "and", "of", "for", "other", "details",
          "detail", "value", "key", "year", "time", "count", "total", "average", "max", "min"}
# Function words that schema names contain now and then ("in" of "date_in"): never replaced.
FUNCTION_WORDS = {"in", "on", "at", "to", "by", "is", "are", "be", "or", "as", "it", "its", "with", "from", "who",
                  "what", "which", "how", "all", "each", "do", "does", "did", "has", "have", "had", "not", "no", "yes",
                  "one", "first", "last", "more", "most", "than", "that", "this", "these", "those", "there", "their",
                  "they", "he", "she", "his", "her", "was", "were", "many", "much", "any", "some", "per", "out", "up"}
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def schema_words(tables_json):
    """{db_id: set of lower-case words of its table and column names (original and natural)}."""
    out = {}
    for db in tables_json:
        words = set()
        names = db["table_names_original"] + db["table_names"]
        names += [c[1] for c in db["column_names_original"] + db["column_names"] if c[0] >= 0]
        for name in names:
            words.update(identifier_words(name))
        out[db["db_id"]] = {w for w in words - COMMON - FUNCTION_WORDS if len(w) > 2}
    return out


def inflect_like(original, base, synonym):
    """The synonym in the original word's number and capitalisation."""
    out = synonym
    if original.lower() != base and original.lower().endswith("s") and " " not in synonym:
        out = synonym[:-1] + "ies" if synonym.endswith("y") and synonym[-2:-1] not in "aeiou" else \
            synonym + ("es" if synonym.endswith(("s", "x", "z", "ch", "sh")) else "s")
    return out[0].upper() + out[1:] if original[0].isupper() else out


def replace_schema_words(question, words, wordnet, rng):
    """(new question, [(word, synonym), ...])."""
    replaced = []

    def substitute(match):
        word = match.group(0)
        base = wordnet.base_form(word.lower())
        if not base or base not in words:
            return word
        options = [s for s in wordnet.synonyms(base, 2, True)
                   if s != base and base not in s.split() and not (set(s.split()) & words) and s.isascii()]
        if not options:
            return word
        synonym = inflect_like(word, base, rng.choice(options))
        replaced.append((word, synonym))
        return synonym

    return WORD.sub(substitute, question), replaced


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spider", required=True, help="Spider folder (tables.json and <split>.json)")
    parser.add_argument("--split", default="dev", help="dev (evaluation) or train_spider")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not WordNet.available():
        sys.exit(f"WordNet is not installed in {WordNet.default_folder()} (Debian: apt-get install wordnet-base)")
    spider = pathlib.Path(args.spider)
    words = schema_words(json.loads((spider / "tables.json").read_text()))
    questions = json.loads((spider / f"{args.split}.json").read_text())
    wordnet, rng = WordNet(), random.Random(args.seed)
    out = []
    for q in questions:
        text, replaced = replace_schema_words(q["question"], words.get(q["db_id"], set()), wordnet, rng)
        if replaced:
            out.append({"question": text, "db_id": q["db_id"], "original": q["question"], "replaced": replaced})
    pathlib.Path(args.out).write_text(json.dumps(out, indent=1))
    print(f"{len(out)} of {len(questions)} questions with schema words replaced "
          f"({sum(len(q['replaced']) for q in out)} words) -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
