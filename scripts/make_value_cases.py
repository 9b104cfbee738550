#!/usr/bin/env python3
"""Makes value-linking cases from Spider gold queries for `relmem bench values`.

Every `column = 'literal'` condition of a Spider gold query (train + dev) whose literal is stored in its column
gives a gold value. Each gold value is written the way a person or an LLM might write it instead (the
perturbation categories below), and the case records the gold SQL and the same SQL with the perturbed literal:

    {"db_id", "table", "column", "gold_value", "perturbed_value", "category", "gold_sql", "perturbed_sql",
     "split", "fold", "question"}

`fold` splits the databases, not the cases: a seeded hash of the database name puts half of them ("tune") where
post-processing's replacement confidence is fit (scripts/fit_value_confidence.py) and the other half ("heldout")
where it is measured, so no database of the held-out figures was seen while fitting. (Spider's own dev split is
too small for that: 13 synonym and 24 absent cases.)

Categories: case, typo, abbreviation, expansion, synonym, semantic (the value by its meaning: "French" for
'France', "Alaska" for 'AK', "women" for 'F', "false" for 'F' in Is_Male, "October 23, 2010" for '2010-10-23'; from
train databases only, so dev stays unseen), dropped_token, punctuation, spacing, inflection, accent,
unchanged (the literal as stored: post-processing must leave it alone) and absent (a value the column does not
store, taken from a column of the same name elsewhere; gold_sql is the perturbed SQL itself, since a question may
ask for a value a database lacks, and gold_value is null). An absent value must not write a stored value in any way
this script or the database itself does (stored_as_written): not the same after folding case, accents,
punctuation and spacing ("Kohler" / 'Köhler'), not one of this script's own ways of writing a value by its meaning
("USA" / 'United States'), and not the name a linked table of the database gives a stored code ("Paper" for 'PR'
in Ref_Document_Types); such cases are dropped after drawing and sampling, so every other case stays as it was.
A perturbed value that the column happens to store is dropped: it would not be a mismatch. Deterministic for a
given --seed.

    .venv/bin/python scripts/make_value_cases.py --spider ../shared/data/spider --out value_cases.jsonl
"""
import argparse
import hashlib
import json
import pathlib
import random
import re
import sys
import unicodedata

CATEGORIES = ["case", "typo", "abbreviation", "expansion", "synonym", "semantic", "dropped_token", "punctuation",
              "spacing", "inflection", "accent", "unchanged", "absent"]

# Abbreviations people and LLMs expand: the case writes the expansion of a stored short form.
EXPANSIONS = {
    "f": "female", "m": "male", "y": "yes", "n": "no", "t": "true", "l": "left", "r": "right",
    "usa": "United States of America", "us": "United States", "uk": "United Kingdom", "nyc": "New York City",
    "la": "Los Angeles", "sf": "San Francisco", "chi": "Chicago", "hou": "Houston", "bal": "Baltimore",
    "pit": "Pittsburgh", "phl": "Philadelphia", "hr": "Human Resources", "it": "Information Technology",
    "cs": "Computer Science", "comp": "Computer", "sci": "Science", "info": "Information", "prof": "Professor",
    "asst": "Assistant", "assoc": "Associate", "dept": "Department", "univ": "University", "intl": "International",
    "mgr": "Manager", "st": "Saint", "mt": "Mount", "ft": "Fort", "exp": "Express", "cto": "Chief Technology Officer",
    "ceo": "Chief Executive Officer", "cv": "Curriculum Vitae", "tv": "Television", "dvd": "Digital Video Disc",
    "cd": "Compact Disc", "ucla": "University of California Los Angeles", "ups": "United Parcel Service",
    "usps": "United States Postal Service", "phd": "Doctor of Philosophy", "math": "Mathematics",
    "ny": "New York", "ca": "California", "fl": "Florida", "il": "Illinois", "ma": "Massachusetts", "az": "Arizona",
    "tx": "Texas", "wa": "Washington", "ga": "Georgia", "pa": "Pennsylvania", "oh": "Ohio", "mi": "Michigan",
    "nj": "New Jersey", "va": "Virginia", "nc": "North Carolina", "md": "Maryland", "co": "Colorado",
    "ak": "Alaska", "hi": "Hawaii", "ut": "Utah", "wi": "Wisconsin", "in": "Indiana", "ky": "Kentucky",
}

# Words with the same meaning in the questions people ask (kept apart from anything the value memory uses).
SYNONYMS = {
    "usa": "America", "united states": "America", "uk": "Britain", "united kingdom": "Great Britain",
    "film": "movie", "films": "movies", "movies": "films", "movie": "film", "female": "woman", "male": "man",
    "doctor": "physician", "professor": "lecturer", "student": "pupil", "instructor": "teacher", "fast": "quick",
    "slow": "sluggish", "bad": "poor", "good": "fine", "cat": "kitty", "dog": "hound", "auto": "car",
    "fall": "autumn", "night": "evening", "cancelled": "canceled", "completed": "finished", "fail": "failure",
    "loss": "defeat", "win": "victory", "close": "shut", "football": "soccer", "house": "home",
    "apartment": "flat", "modern": "contemporary", "traditional": "classic", "goalie": "goalkeeper",
    "democratic": "democrat", "big": "large", "small": "little", "yes": "true", "no": "false",
    "europe": "european continent", "shopping": "buying", "research": "study", "manager": "supervisor",
    "editor": "redactor", "captured": "seized", "success": "succeeded", "pending": "waiting",
    "delivered": "shipped", "cash": "money", "credit card": "charge card", "surgery": "operation",
    "hot": "warm", "red": "crimson", "music": "songs", "food": "meal", "database": "data base",
    "keyboard": "keypad", "statistics": "stats", "engineer": "engineering", "leader": "head",
    "working": "employed", "open": "opened", "confirmed": "verified", "regular": "normal",
}

# Ways people write a value by its meaning (kept apart from the value memory's lists: data/values, iso-codes, WordNet).
COUNTRY_VARIANTS = {
    "united states": ["American", "America", "US"], "usa": ["American", "United States", "America"],
    "us": ["American", "United States"], "united kingdom": ["British", "UK", "Britain"], "uk": ["British", "Britain"],
    "england": ["English"], "wales": ["Welsh"], "scotland": ["Scottish"], "canada": ["Canadian"],
    "brazil": ["Brazilian"], "germany": ["German"], "indonesia": ["Indonesian"], "uganda": ["Ugandan"],
    "china": ["Chinese"], "japan": ["Japanese"], "bangladesh": ["Bangladeshi"], "morocco": ["Moroccan"],
    "ethiopia": ["Ethiopian"], "australia": ["Australian"], "russia": ["Russian"], "iceland": ["Icelandic"],
    "cuba": ["Cuban"], "argentina": ["Argentinian", "Argentine"], "italy": ["Italian"], "france": ["French"],
    "spain": ["Spanish"], "mexico": ["Mexican"], "india": ["Indian"], "ireland": ["Irish"], "sweden": ["Swedish"],
    "switzerland": ["Swiss"], "netherlands": ["Dutch", "Holland"], "haiti": ["Haitian"], "poland": ["Polish"],
    "american": ["United States", "USA"], "canadian": ["Canada"], "british": ["United Kingdom", "UK"],
    "french": ["France"], "german": ["Germany"], "fra": ["France"], "ger": ["Germany"], "sui": ["Switzerland"],
    "esp": ["Spain"], "ita": ["Italy"], "gbr": ["United Kingdom"], "can": ["Canada"], "aus": ["Australia"],
}
US_STATES = {
    "al": "Alabama", "ak": "Alaska", "az": "Arizona", "ar": "Arkansas", "ca": "California", "co": "Colorado",
    "ct": "Connecticut", "de": "Delaware", "fl": "Florida", "ga": "Georgia", "hi": "Hawaii", "id": "Idaho",
    "il": "Illinois", "in": "Indiana", "ia": "Iowa", "ks": "Kansas", "ky": "Kentucky", "la": "Louisiana",
    "me": "Maine", "md": "Maryland", "ma": "Massachusetts", "mi": "Michigan", "mn": "Minnesota", "ms": "Mississippi",
    "mo": "Missouri", "mt": "Montana", "ne": "Nebraska", "nv": "Nevada", "nh": "New Hampshire", "nj": "New Jersey",
    "nm": "New Mexico", "ny": "New York", "nc": "North Carolina", "nd": "North Dakota", "oh": "Ohio", "ok": "Oklahoma",
    "or": "Oregon", "pa": "Pennsylvania", "ri": "Rhode Island", "sc": "South Carolina", "sd": "South Dakota",
    "tn": "Tennessee", "tx": "Texas", "ut": "Utah", "vt": "Vermont", "va": "Virginia", "wa": "Washington",
    "wv": "West Virginia", "wi": "Wisconsin", "wy": "Wyoming",
}
GENDER_WORDS = {"f": ["women", "woman", "ladies"], "female": ["woman", "women"], "m": ["men", "man"],
                "male": ["man", "men"]}
TRUTH_WORDS = {"t": ["true", "yes"], "f": ["false", "no"], "y": ["yes", "true"], "n": ["no", "false"],
               "yes": ["true"], "no": ["false"], "true": ["yes"], "false": ["no"]}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]

KEYBOARD = {c: n for c, n in zip("qwertyuiopasdfghjklzxcvbnm", ["wa", "qes", "wrd", "etf", "rtg", "tuh", "yij", "uok",
            "ipl", "ol", "qsz", "adwx", "sfec", "dgrv", "fhtb", "gjyn", "hkum", "jlio", "kop", "asx", "zdcs", "xfvd",
            "cgbf", "vhng", "bjmh", "nkj"])}
ACCENTS = {"a": "á", "e": "é", "i": "í", "o": "ó", "u": "ú", "n": "ñ", "c": "ç"}
WORD = re.compile(r"[A-Za-z]+")


def _match_case(template, text):
    if template.isupper() and len(template) > 1:
        return text.upper()
    if template[:1].isupper():
        return text[:1].upper() + text[1:]
    return text


def perturb_case(value, rng):
    if not re.search(r"[A-Za-z]", value):
        return None
    options = [value.lower(), value.upper(), value.title(), value.swapcase()]
    options = [o for o in dict.fromkeys(options) if o != value]
    return rng.choice(options) if options else None


def perturb_typo(value, rng):
    letters = [i for i, c in enumerate(value) if c.isalpha() and i > 0]
    if len([c for c in value if c.isalpha()]) < 4 or not letters:
        return None
    i = rng.choice(letters)
    kind = rng.choice(["delete", "transpose", "substitute", "insert"])
    if kind == "delete":
        return value[:i] + value[i + 1:]
    if kind == "transpose" and i + 1 < len(value) and value[i + 1].isalpha() and value[i + 1] != value[i]:
        return value[:i] + value[i + 1] + value[i] + value[i + 2:]
    if kind == "substitute" and value[i].lower() in KEYBOARD:
        return value[:i] + _match_case(value[i], rng.choice(KEYBOARD[value[i].lower()])) + value[i + 1:]
    return value[:i] + value[i] + value[i:]  # doubled letter


def perturb_abbreviation(value, rng):
    words = WORD.findall(value)
    content = [w for w in words if w.lower() not in ("of", "and", "the")]
    if len(words) != len(value.split()):
        return None  # digits or symbols in the value: no natural abbreviation
    if 2 <= len(content) <= 4:
        return "".join(w[0].upper() for w in content)
    if len(words) == 1 and len(value) >= 6:
        if rng.random() < 0.5:
            return value[: rng.choice([3, 4])] + rng.choice(["", "."])
        skeleton = value[0] + "".join(c for c in value[1:] if c.lower() not in "aeiou")
        skeleton = re.sub(r"(.)\1+", r"\1", skeleton)
        return skeleton[:4] if len(skeleton) >= 3 else None
    return None


def perturb_expansion(value, rng):
    key = re.sub(r"[^a-z]", "", value.lower())
    if key in EXPANSIONS:
        return _match_case(value, EXPANSIONS[key]) if len(value) > 1 else EXPANSIONS[key]
    tokens = value.split()
    hits = [i for i, t in enumerate(tokens) if re.sub(r"[^a-z]", "", t.lower()) in EXPANSIONS and len(tokens) > 1]
    if not hits:
        return None
    i = rng.choice(hits)
    tokens[i] = _match_case(tokens[i], EXPANSIONS[re.sub(r"[^a-z]", "", tokens[i].lower())])
    return " ".join(tokens)


def perturb_synonym(value, rng):
    lowered = value.lower()
    if lowered in SYNONYMS:
        return _match_case(value, SYNONYMS[lowered])
    tokens = value.split()
    hits = [i for i, t in enumerate(tokens) if t.lower() in SYNONYMS]
    if len(tokens) < 2 or not hits:
        return None
    i = rng.choice(hits)
    tokens[i] = _match_case(tokens[i], SYNONYMS[tokens[i].lower()])
    return " ".join(tokens)


def perturb_semantic(value, rng, column=""):
    lowered = value.lower()
    date = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)", value)
    if date and 1 <= int(date[2]) <= 12:
        return f"{MONTHS[int(date[2]) - 1]} {int(date[3])}, {date[1]}"
    if re.search(r"sex|gender", column, re.I) and lowered in GENDER_WORDS:
        return rng.choice(GENDER_WORDS[lowered])
    if re.match(r"(is|has)_?[A-Za-z]|active|flag", column, re.I) and lowered in TRUTH_WORDS:
        return rng.choice(TRUTH_WORDS[lowered])
    if re.search(r"countr|nation|citizen|headquarter", column, re.I) and lowered in COUNTRY_VARIANTS:
        return rng.choice(COUNTRY_VARIANTS[lowered])
    if re.search(r"state", column, re.I):
        if lowered in US_STATES:
            return US_STATES[lowered]
        codes = [code.upper() for code, name in US_STATES.items() if name.lower() == lowered]
        return codes[0] if codes else None
    return None


def meaning_variants(value):
    """Every way this script's own tables write `value` by its meaning (both directions): an "absent" value must
    not be one of these for a value its column stores, or the same pair would count as a miss in one category and
    a wrong replacement in another ("USA" absent from a column that stores 'United States')."""
    lowered = value.lower()
    tables = [{k: [v] for k, v in EXPANSIONS.items()}, COUNTRY_VARIANTS, {k: [v] for k, v in US_STATES.items()},
              GENDER_WORDS, {k: [v] for k, v in SYNONYMS.items()}]
    out = set()
    for table in tables:
        for key, forms in table.items():
            forms_lower = [f.lower() for f in forms]
            if key == lowered:
                out.update(forms_lower)
            if lowered in forms_lower:
                out.add(key)
                out.update(forms_lower)
    out.discard(lowered)
    return out


def perturb_dropped_token(value, rng):
    tokens = value.split()
    function = [i for i, t in enumerate(tokens) if t.lower() in ("of", "and", "the", "a", "&")]
    if function:
        i = rng.choice(function)
    elif len(tokens) >= 3:  # a two-word value without its first or last word is another value ("San")
        i = rng.randrange(len(tokens))
    else:
        return None
    rest = tokens[:i] + tokens[i + 1:]
    return " ".join(rest) if any(re.search(r"[A-Za-z]", t) for t in rest) else None


def perturb_punctuation(value, rng):
    if re.search(r"[^\w\s]", value):
        stripped = re.sub(r"[^\w\s]", rng.choice(["", " "]), value)
        return re.sub(r"\s+", " ", stripped).strip() or None
    tokens = value.split()
    if len(tokens) < 2:
        return None
    i = rng.randrange(len(tokens) - 1)
    return " ".join(tokens[:i + 1]) + rng.choice(["-", ", ", ". ", "/"]) + " ".join(tokens[i + 1:])


def perturb_spacing(value, rng):
    tokens = value.split()
    if len(tokens) >= 2:
        return "".join(tokens) if rng.random() < 0.5 else "  ".join(tokens)
    if len(value) >= 8 and value.isalpha():
        i = rng.randrange(3, len(value) - 3)
        return value[:i] + " " + value[i:]
    return None


def _inflect(word):
    lower = word.lower()
    if lower.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if lower.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    if lower.endswith("y") and len(word) > 2 and lower[-2] not in "aeiou":
        return word[:-1] + "ies"
    if lower.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def perturb_inflection(value, rng):
    tokens = value.split()
    if not tokens or not tokens[-1].isalpha() or len(tokens[-1]) < 3:
        return None
    return " ".join(tokens[:-1] + [_inflect(tokens[-1])])


def perturb_accent(value, rng):
    folded = "".join(c for c in unicodedata.normalize("NFKD", value) if not unicodedata.combining(c))
    if folded != value:
        return folded
    spots = [i for i, c in enumerate(value) if c.lower() in ACCENTS]
    if not spots:
        return None
    i = rng.choice(spots)
    return value[:i] + _match_case(value[i], ACCENTS[value[i].lower()]) + value[i + 1:]


PERTURBATIONS = {
    "case": perturb_case, "typo": perturb_typo, "abbreviation": perturb_abbreviation,
    "expansion": perturb_expansion, "synonym": perturb_synonym, "dropped_token": perturb_dropped_token,
    "punctuation": perturb_punctuation, "spacing": perturb_spacing, "inflection": perturb_inflection,
    "accent": perturb_accent,
}


def _rng(seed, *parts):
    digest = hashlib.sha256(json.dumps([seed, *parts]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "little"))


def database_fold(seed, db, heldout_share=0.5):
    """"tune" or "heldout" for every case of database `db` (deterministic for a seed)."""
    draw = int.from_bytes(hashlib.sha256(json.dumps([seed, "fold", db]).encode()).digest()[:8], "little") / 2**64
    return "heldout" if draw < heldout_share else "tune"


def _stored(catalog, db, table, column, value, ignore_case=False, as_text=False):
    q = '"' + column.replace('"', '""') + '"'
    t = '"' + table.replace('"', '""') + '"'
    literal = "'" + value.replace("'", "''") + "'"
    condition = f"lower({q}) = lower({literal})" if ignore_case else f"{q} = {literal}"
    if as_text:
        condition += f" AND typeof({q}) = 'text'"
    result = catalog.execute(db, f"SELECT 1 FROM {t} WHERE {condition} LIMIT 1")
    return result.ok and len(result.rows) > 0


def folded(text):
    """`text` without the differences the case, accent, punctuation and spacing categories make: those write a
    stored value, so a literal that folds to a stored value is that value, not an absent one ("Kohler" / 'Köhler')."""
    stripped = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", "", stripped.casefold())


def _quoted(name):
    return '"' + name.replace('"', '""') + '"'


def linked_columns(schema, table, column):
    """(table, column) pairs of other tables that hold the same things as table.column: a column of the same name, or
    either end of a foreign key with it."""
    out = set()
    for t in schema.tables:
        if t.name.lower() != table.lower():
            out.update((t.name, c.name) for c in t.columns if c.name.lower() == column.lower())
        for fk in t.foreign_keys:
            if t.name.lower() == table.lower() and fk.from_column.lower() == column.lower():
                out.add((fk.to_table, fk.to_column))
            if fk.to_table.lower() == table.lower() and fk.to_column.lower() == column.lower():
                out.add((t.name, fk.from_column))
    return sorted(p for p in out if p[0].lower() != table.lower())


def described_value(catalog, db, table, column, literal):
    """Whether the database itself names one of table.column's stored values by `literal`: a row of another table
    holding such a value in a linked column (linked_columns) has `literal` in one of its text columns, as a code
    table names its codes ('PR' is "Paper" in Ref_Document_Types)."""
    schema = catalog.schema(db)
    for other_table, other_column in linked_columns(schema, table, column):
        for text_column in schema.table(other_table).columns:
            if text_column.name.lower() == other_column.lower():
                continue
            sql = (f"SELECT 1 FROM {_quoted(other_table)} WHERE lower({_quoted(text_column.name)}) = lower(?1) "
                   f"AND {_quoted(other_column)} IN (SELECT {_quoted(column)} FROM {_quoted(table)}) LIMIT 1")
            sql = sql.replace("?1", "'" + literal.replace("'", "''") + "'")
            result = catalog.execute(db, sql)
            if result.ok and result.rows:
                return True
    return False


def stored_as_written(catalog, db, table, column, literal):
    """Whether `literal` writes a value table.column stores: the same after folding (folded), by one of this script's
    own tables of meanings (meaning_variants), or by the database's own description of its codes
    (described_value). An "absent" case must be none of these, or its label is wrong."""
    result = catalog.execute(db, f"SELECT DISTINCT {_quoted(column)} FROM {_quoted(table)} "
                                 f"WHERE typeof({_quoted(column)}) = 'text'")
    stored = {folded(row[0]) for row in result.rows} if result.ok else set()
    if folded(literal) in stored or any(folded(m) in stored for m in meaning_variants(literal)):
        return True
    return described_value(catalog, db, table, column, literal)


def gold_conditions(catalog, spider_dir):
    """(split, item, condition, conditions) for every `column = 'literal'` of the gold queries, in file order."""
    from relmem.values import value_conditions
    for split, name in (("train", "train_spider.json"), ("dev", "dev.json")):
        for item in json.loads((pathlib.Path(spider_dir) / name).read_text()):
            if item["db_id"] not in catalog:
                continue
            try:
                conditions = value_conditions(item["query"], catalog.schema(item["db_id"]))
            except Exception:  # noqa: BLE001 - a gold query our parser rejects gives no case
                continue
            for condition in conditions:
                if condition.op == "=" and condition.value.strip():
                    yield split, item, condition, conditions


def make_cases(catalog, spider_dir, seed=0, per_category=250, categories=CATEGORIES, heldout_share=0.5):
    from relmem.values import rewrite_string_literals
    golds = {}  # (db, table, column, value) -> first (split, item, condition)
    for split, item, condition, conditions in gold_conditions(catalog, spider_dir):
        key = (item["db_id"], condition.table, condition.column, condition.value)
        if key in golds or not _stored(catalog, *key, as_text=True):
            continue
        # Gold queries that compare a column with a value it does not store (Spider has a few typos) are no
        # reference for what post-processing should do.
        others = [c for c in conditions if c.op in ("=", "!=", "IN", "NOT IN") and c is not condition]
        if not all(_stored(catalog, item["db_id"], c.table, c.column, c.value) for c in others):
            continue
        if not catalog.execute(item["db_id"], item["query"]).ok:
            continue
        golds[key] = (split, item, condition)

    by_column_name = {}
    for (db, table, column, value) in golds:
        by_column_name.setdefault(column.lower(), []).append((db, value))

    cases = {category: [] for category in categories}
    for key, (split, item, condition) in golds.items():
        db, table, column, value = key
        for category in categories:
            rng = _rng(seed, db, table, column, value, category)
            gold_value = value
            if category == "unchanged":
                perturbed = value
            elif category == "absent":
                pool = [v for d, v in by_column_name.get(column.lower(), []) if d != db]
                pool = [v for v in dict.fromkeys(pool) if not _stored(catalog, db, table, column, v, ignore_case=True)
                        and not any(_stored(catalog, db, table, column, m, ignore_case=True)
                                    for m in meaning_variants(v))]
                if not pool:
                    continue
                perturbed, gold_value = rng.choice(sorted(pool)), None
            elif category == "semantic":
                if split != "train":  # tuned on train databases; dev stays a held-out check
                    continue
                perturbed = perturb_semantic(value, rng, column)
                if not perturbed or perturbed == value or _stored(catalog, db, table, column, perturbed):
                    continue
            else:
                perturbed = PERTURBATIONS[category](value, rng)
                if not perturbed or perturbed == value or perturbed.strip() != perturbed:
                    continue
                if _stored(catalog, db, table, column, perturbed):
                    continue
            perturbed_sql = rewrite_string_literals(item["query"], {condition.literal_index: perturbed})
            cases[category].append({
                "db_id": db, "table": table, "column": column, "gold_value": gold_value,
                "perturbed_value": perturbed, "category": category,
                "gold_sql": perturbed_sql if category == "absent" else item["query"],
                "perturbed_sql": perturbed_sql, "split": split, "fold": database_fold(seed, db, heldout_share),
                "question": item["question"],
            })
    out = []
    for category in categories:
        chosen = cases[category]
        if per_category and len(chosen) > per_category:
            chosen = _rng(seed, "sample", category).sample(chosen, per_category)
            chosen.sort(key=lambda c: (c["db_id"], c["table"], c["column"], c["perturbed_value"]))
        if category == "absent":  # dropped after the draws and the sample, so that every other case stays as it was
            chosen = [c for c in chosen
                      if not stored_as_written(catalog, c["db_id"], c["table"], c["column"], c["perturbed_value"])]
        out.extend(chosen)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spider", default="../shared/data/spider", help="Spider folder (database/, *.json)")
    parser.add_argument("--out", required=True, help="JSONL file to write")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-category", type=int, default=250, help="cases kept per category (0: all)")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--heldout-share", type=float, default=0.5, help="share of databases in the held-out fold")
    args = parser.parse_args(argv)

    import relmem
    from relmem import outputs
    catalog = relmem.Catalog(str(pathlib.Path(args.spider) / "database"))
    categories = [c for c in args.categories.split(",") if c]
    unknown = set(categories) - set(CATEGORIES)
    if unknown:
        parser.error(f"unknown categories: {', '.join(sorted(unknown))}")
    cases = make_cases(catalog, args.spider, seed=args.seed, per_category=args.per_category, categories=categories,
                       heldout_share=args.heldout_share)
    outputs.write_file(args.out, "".join(json.dumps(case, ensure_ascii=False) + "\n" for case in cases))
    counts = {c: sum(case["category"] == c for case in cases) for c in categories}
    heldout = sum(case["fold"] == "heldout" for case in cases)
    print(f"{len(cases)} cases ({heldout} held out) -> {args.out}: {json.dumps(counts)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
