"""Answer matching: normalised text (case, punctuation, articles, spacing), numbers with a tolerance, and sets of
rows. Every function here is pure, so a report can re-score old runs."""
import itertools
import math
import re
import string
import unicodedata

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation) - {".", "-"}  # kept inside numbers ("3.5", "-2"); dropped elsewhere below
_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$")
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])(?:[-+]?\d[\d,]*(?:\.\d+)?|[-+]?\.\d+)(?!\w)")  # not "Q2", "2nd"
_TABLE_RULE = re.compile(r"^-+(?:-\+-+-*)*$")
_MORE_ROWS = re.compile(r"^\.\.\. (\d+) more rows$")
_QUESTION_LABEL = re.compile(r"\bQ\s*([1-9])\b", re.I)
_CHOICE_LABEL = re.compile(r"(?:answer\s*:?\s*)?[(\[]?\s*([A-Z])\s*[)\].]?", re.I)
REL_TOLERANCE = 1e-4
MAX_COLUMN_ORDERS = 10000  # orders of the columns tried (columns holding the same cells can swap places)


def normalize_text(text):
    """SQuAD-style: lower case, accents folded, punctuation and articles removed, spaces collapsed. Decimal points
    and minus signs between digits survive, so '3.5' stays a number."""
    text = unicodedata.normalize("NFKD", str(text))
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = "".join(" " if ch in _PUNCTUATION else ch for ch in text)
    text = re.sub(r"(?<!\d)[.\-]|[.\-](?!\d)", " ", text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def as_number(value):
    """A float for ints, floats and numeric strings ('1,234', '3.50'), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    text = str(value).strip().replace(",", "")
    return float(text) if _NUMBER.match(text) else None


def numbers_equal(a, b):
    return math.isclose(a, b, rel_tol=REL_TOLERANCE, abs_tol=1e-6)


def cell_key(value):
    """A cell as compared: a number rounded to the tolerance, else its normalised text."""
    number = as_number(value)
    if number is not None:
        return ("n", round(number, 4))
    return ("t", "" if value is None else normalize_text(value))


def values_equal(a, b):
    x, y = as_number(a), as_number(b)
    if x is not None and y is not None:
        return numbers_equal(x, y)
    return cell_key(a) == cell_key(b)


def rows_match(rows, gold, ordered=False):
    """Same rows (as multisets of normalised cells; in order when `ordered`) under some order of the columns, as
    Spider's execution accuracy compares results (test-suite-sql-eval's result_eq); column names do not count."""
    left = [tuple(cell_key(v) for v in row) for row in rows]
    right = [tuple(cell_key(v) for v in row) for row in gold]

    def same(a):
        return a == right if ordered else sorted(a) == sorted(right)

    if same(left):
        return True
    if not left or len(left) != len(right) or any(len(row) != len(right[0]) for row in left + right):
        return False
    width = len(right[0])
    gold_columns = [sorted(row[j] for row in right) for j in range(width)]
    places = [[j for j in range(width) if sorted(row[i] for row in left) == gold_columns[j]] for i in range(width)]
    for order in itertools.islice(_orders(places, [], set()), MAX_COLUMN_ORDERS):
        moved = []
        for row in left:
            cells = [None] * width
            for i, j in enumerate(order):
                cells[j] = row[i]
            moved.append(tuple(cells))
        if same(moved):
            return True
    return False


def _orders(places, chosen, taken):
    """Each way of giving column i one of places[i], no place twice."""
    if len(chosen) == len(places):
        yield list(chosen)
        return
    for j in places[len(chosen)]:
        if j not in taken:
            chosen.append(j)
            taken.add(j)
            yield from _orders(places, chosen, taken)
            chosen.pop()
            taken.discard(j)


def text_contains(answer, value):
    """Whether `value` (a cell) appears in the answer text: as a number anywhere among its numbers, or as a
    normalised phrase on word boundaries."""
    number = as_number(value)
    if number is not None:
        return any(numbers_equal(number, found) for found in numbers_in(answer))
    phrase = normalize_text("" if value is None else value)
    if not phrase:
        return value is None and "null" in normalize_text(answer).split()
    return re.search(rf"(?<![\w]){re.escape(phrase)}(?![\w])", normalize_text(answer)) is not None


def numbers_in(text):
    return [float(m.group().replace(",", "")) for m in _NUMBER_IN_TEXT.finditer(str(text))
            if as_number(m.group()) is not None]


def parse_table(text):
    """(rows, hidden) from a plain-text table as relmem prints results (header, '---+---' rule, rows, '... N more
    rows'); None when the text is not such a table."""
    lines = re.split(r"\n[ \t]*\n", str(text).strip(), maxsplit=1)[0].splitlines()
    if len(lines) < 2 or not _TABLE_RULE.match(lines[1].replace(" ", "")):
        return None
    columns = len(lines[0].split(" | "))
    rows, hidden = [], 0
    for line in lines[2:]:
        more = _MORE_ROWS.match(line.strip())
        if more:
            hidden = int(more.group(1))
        elif line.strip() != "(no rows)":
            cells = [cell.strip() for cell in line.split(" | ")]
            rows.append(cells + [""] * (columns - len(cells)) if len(cells) < columns else cells)
    return rows, hidden


def rows_answer_correct(answer, gold_rows, ordered=False):
    """An answer to a single-database question: a printed table must hold exactly the gold rows (rows beyond those
    shown are only counted); a single value or a sentence must state every gold cell."""
    table = parse_table(answer)
    if table is not None:
        rows, hidden = table
        if hidden:
            gold_keys = {tuple(cell_key(v) for v in row) for row in gold_rows}
            return len(rows) + hidden == len(gold_rows) and all(
                tuple(cell_key(v) for v in row) in gold_keys for row in rows)
        return rows_match(rows, gold_rows, ordered)
    cells = [v for row in gold_rows for v in row]
    if len(cells) == 1:
        return values_equal(str(answer).strip(), cells[0]) or text_contains(answer, cells[0])
    return bool(cells) and all(text_contains(answer, v) for v in cells)


def chosen_question(answer):
    """The Q-number a comparison answer names, or None when it names none or several."""
    named = {int(m.group(1)) for m in _QUESTION_LABEL.finditer(str(answer))}
    return named.pop() if len(named) == 1 else None


def text_answer_correct(answer, accepted):
    """A free-text answer: equal to, or containing, one of the accepted answers once normalised."""
    said = normalize_text(answer)
    for option in accepted:
        wanted = normalize_text(option)
        if wanted and (said == wanted or re.search(rf"(?<!\w){re.escape(wanted)}(?!\w)", said)):
            return True
    return False


def choice_answer_correct(answer, choices, key):
    """A multiple-choice answer: the right label alone ('B', '(B)') or the right choice's text, and no other
    choice's text."""
    label = _CHOICE_LABEL.fullmatch(str(answer).strip())
    if label:
        return label.group(1).upper() == key.upper()
    right = choices[key]
    others = [text for label, text in choices.items() if label != key]
    return text_answer_correct(answer, [right]) and not any(
        text_answer_correct(answer, [other]) and normalize_text(other) not in normalize_text(right) for other in others)
