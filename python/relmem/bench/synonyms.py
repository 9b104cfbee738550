"""Questions with the words of their database's schema replaced by WordNet synonyms.

Every word of a question whose dictionary form (WordNet's morphy) is a word of its database's table or column names
("singers" for the table singer) is replaced by a synonym from WordNet's most frequent noun sense of that word
("vocalists"), keeping the plural and the capital, when one exists that is not itself a word of the schema (rarer
senses give replacements no person would write: "matches" -> "lucifers"). Words too common in schemas (id, name,
number, ...) and function words stay. Deterministic for a given seed.

The selection memory's synonym expansion draws on the same sense of the same WordNet, so such questions measure how
much the expansion recovers of what synonyms cost, optimistically: people's synonyms are not all in WordNet
(Spider-Syn's are written by hand; it is for evaluation only and not used here).
"""
import random
import re

from .. import Error
from .._relmem import WordNet, identifier_words

COMMON = {"id", "name", "names", "type", "code", "date", "number", "the", "and", "of", "for", "other", "details",
          "detail", "value", "key", "year", "time", "count", "total", "average", "max", "min"}
# Function words that schema names contain now and then ("in" of "date_in"): never replaced.
FUNCTION_WORDS = {"in", "on", "at", "to", "by", "is", "are", "be", "or", "as", "it", "its", "with", "from", "who",
                  "what", "which", "how", "all", "each", "do", "does", "did", "has", "have", "had", "not", "no", "yes",
                  "one", "first", "last", "more", "most", "than", "that", "this", "these", "those", "there", "their",
                  "they", "he", "she", "his", "her", "was", "were", "many", "much", "any", "some", "per", "out", "up"}
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def schema_words(catalog, db):
    """The lower-case words of a database's table and column names, less common and function words."""
    words = set()
    for table in catalog.schema(db).tables:
        for name in [table.name] + [column.name for column in table.columns]:
            words.update(identifier_words(name))
    return {w for w in words - COMMON - FUNCTION_WORDS if len(w) > 2}


def _inflect_like(original, base, synonym):
    """The synonym in the original word's number and capitalisation."""
    out = synonym
    if original.lower() != base and original.lower().endswith("s") and " " not in synonym:
        if synonym.endswith("y") and synonym[-2:-1] not in "aeiou":
            out = synonym[:-1] + "ies"
        else:
            out = synonym + ("es" if synonym.endswith(("s", "x", "z", "ch", "sh")) else "s")
    return out[0].upper() + out[1:] if original[0].isupper() else out


def replace_schema_words(question, words, wordnet, rng):
    """(question with schema words replaced, [(word, synonym), ...])."""
    replaced = []

    def substitute(match):
        word = match.group(0)
        base = wordnet.base_form(word.lower())
        if not base or base not in words:
            return word
        options = [s for s in wordnet.synonyms(base, 1, True)
                   if s != base and base not in s.split() and not (set(s.split()) & words) and s.isascii()]
        if not options:
            return word
        synonym = _inflect_like(word, base, rng.choice(options))
        replaced.append((word, synonym))
        return synonym

    return WORD.sub(substitute, question), replaced


def synonym_questions(questions, catalog, seed=0):
    """[(text, [db], original text, [(word, synonym), ...])] for the single-database questions [(text, [db])] in which
    some schema word was replaced (questions on databases the catalog lacks are skipped); relmem.Error without
    WordNet."""
    if not WordNet.available():
        raise Error(f"WordNet is not installed in {WordNet.default_folder()} (Debian: apt-get install wordnet-base)")
    wordnet, rng, words, out = WordNet(), random.Random(seed), {}, []
    present = set(catalog.databases)
    for text, dbs in questions:
        if len(dbs) != 1 or dbs[0] not in present:
            continue
        if dbs[0] not in words:
            words[dbs[0]] = schema_words(catalog, dbs[0])
        new_text, replaced = replace_schema_words(text, words[dbs[0]], wordnet, rng)
        if replaced:
            out.append((new_text, dbs, text, replaced))
    return out
