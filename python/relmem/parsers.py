"""Parsers for what the LLM writes at each stage: lenient about form, strict about content.

Each parser takes the LLM's text and returns a value or raises FormatError. Forms accepted besides the one the
prompts ask for: bracketed markers ([Begin SQL], [End SQL], [YES]), markdown code fences (```sql), bold and bullet
decoration, extra prose before and after, any letter case. ask_with_format() gives malformed output one retry with
its output contract's format reminder (relmem.contracts) and records every attempt in a trace, so a failure never loses what the LLM said.
"""
import re
from dataclasses import dataclass

from ._relmem import Error


class FormatError(Error):
    """The LLM output does not have the format its stage asks for."""


class StageFailure(Error):
    """A stage gave no usable output: the LLM failed, or its output stayed malformed after a format reminder."""

    def __init__(self, stage, reason):
        super().__init__(f"stage {stage}: {reason}")
        self.stage = stage
        self.reason = reason


@dataclass(frozen=True)
class Target:
    """One retrieval target of a plan: what it is for, its SQL, and the database it runs on."""
    goal: str
    sql: str
    database: str


RETURN_SQL_RESULT = "sql_result"  # the SQL result itself is the answer
RETURN_TEXT = "text"              # write a text answer from the SQL results


# --- SQL blocks ------------------------------------------------------------------------------------------------

_DECORATION = r"[ \t>*#`\-\d.)\[(]*"  # bullets, numbering, bold, headings, quotes before a keyword
_BEGIN = re.compile(r"[\[(]?[ \t*`]*\bbegin[ \t_-]*sql\b[ \t*`]*[\])]?[ \t]*:?", re.I)
_END = re.compile(r"[\[(]?[ \t*`]*\bend[ \t_-]*sql\b[ \t*`]*[\])]?", re.I)
_FENCE = re.compile(r"```[ \t]*([A-Za-z]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_GOAL = re.compile(r"^" + _DECORATION + r"goal\b(?:[ \t]*\d+)?[ \t*\]`]*[:\-–]?[ \t*]*(.*)$", re.I | re.M)
_DATABASE = re.compile(
    r"^" + _DECORATION + r"(?:target[ \t]+)?database\b(?:[ \t]+(?:name|used|id|to[ \t]+use)\b)?"
    r"(?:[ \t]*\d+(?=[ \t*\]]*:))?[ \t*\]`]*[:\-–=]?[ \t*]*(.*)$", re.I | re.M)
_SQL_START = re.compile(r"^[ \t]*(select|with)\b", re.I | re.M)
_NO_DATABASE = re.compile(
    r"\bno\s+(?:relevant\s+|suitable\s+|matching\s+)?databases?\b|\bnone\s+of\s+the\s+databases\b", re.I)


@dataclass(frozen=True)
class _Block:
    start: int
    end: int
    sql: str


def _clean_sql(sql):
    fenced = _FENCE.search(sql)
    if fenced:
        sql = fenced.group(2)
    sql = sql.replace("```", "").strip().strip("`").strip()
    return sql.rstrip(";").strip()


def _looks_like_sql(text):
    return bool(_SQL_START.match(text.lstrip()))


def _marker_blocks(text):
    blocks = []
    position = 0
    boundaries = sorted(m.start() for m in list(_GOAL.finditer(text)) + list(_DATABASE.finditer(text)))
    while True:
        begin = _BEGIN.search(text, position)
        if not begin:
            return blocks
        end = _END.search(text, begin.end())
        next_begin = _BEGIN.search(text, begin.end())
        if end and (not next_begin or end.start() < next_begin.start()):
            body_end, resume = end.start(), end.end()
        else:  # unterminated (e.g. cut at max_tokens): up to the next keyword line
            limits = [b for b in boundaries if b > begin.end()] + ([next_begin.start()] if next_begin else [])
            body_end = resume = min(limits, default=len(text))
        blocks.append(_Block(begin.start(), resume, _clean_sql(text[begin.end():body_end])))
        position = resume


def _fence_blocks(text):
    return [_Block(m.start(), m.end(), _clean_sql(m.group(2))) for m in _FENCE.finditer(text)
            if m.group(1).lower() == "sql" or (not m.group(1) and _looks_like_sql(m.group(2)))]


def _bare_blocks(text):
    """SELECT/WITH statements without markers: each runs to the next Goal/Database line, blank line or the end."""
    stops = sorted([m.start() for m in _GOAL.finditer(text)] + [m.start() for m in _DATABASE.finditer(text)] +
                   [m.start() for m in re.finditer(r"\n[ \t]*\n", text)])
    blocks = []
    for m in _SQL_START.finditer(text):
        if blocks and m.start() < blocks[-1].end:
            continue
        end = min((s for s in stops if s > m.start()), default=len(text))
        blocks.append(_Block(m.start(), end, _clean_sql(text[m.start():end])))
    return blocks


def _sql_blocks(text):
    return _marker_blocks(text) or _fence_blocks(text) or _bare_blocks(text)


# --- plan --------------------------------------------------------------------------------------------------------

def _database_name(raw):
    name = re.search(r"[\w][\w.\-]*", re.sub(r"[`*'\"]", " ", raw))
    return name.group(0).rstrip(".") if name else ""


def _assign_databases(blocks, databases, text_length):
    """Per block, its Database line: after the SQL (the asked order) or before it, whichever convention fits more
    blocks, so a stray prose line starting with "Database" cannot flip the order."""
    def gap_after(i):
        return blocks[i].end, blocks[i + 1].start if i + 1 < len(blocks) else text_length

    def gap_before(i):
        return blocks[i - 1].end if i else 0, blocks[i].start

    after = [next((d for p, d in databases if gap_after(i)[0] <= p < gap_after(i)[1]), "") for i in range(len(blocks))]
    before = [next((d for p, d in reversed(databases) if gap_before(i)[0] <= p < gap_before(i)[1]), "")
              for i in range(len(blocks))]
    return before if sum(map(bool, before)) > sum(map(bool, after)) else after


def _known_name(name, known_databases):
    by_lower = {k.lower(): k for k in known_databases}
    if name.lower() not in by_lower:
        raise FormatError(f"unknown database '{name}' (the databases are: {', '.join(known_databases)})")
    return by_lower[name.lower()]


def parse_plan(text, known_databases=None):
    """Targets of a retrieval plan: repeated `Goal: ...` / `Begin SQL ... End SQL` / `Database: ...`.

    Returns a list of Target (empty when the LLM says no database is relevant). A target without a Goal line gets
    an empty goal; a target without a Database line, or with empty SQL, is a FormatError. With `known_databases`
    (names), database names are matched case-insensitively to those spellings and an unknown one is a FormatError.
    """
    blocks = _sql_blocks(text)
    if not blocks:
        if _NO_DATABASE.search(text):
            return []
        raise FormatError("no SQL found: expected Goal / Begin SQL ... End SQL / Database for each target")
    goals = [(m.start(), m.group(1).strip().strip("*").strip()) for m in _GOAL.finditer(text)]
    databases = [(m.start(), _database_name(m.group(1))) for m in _DATABASE.finditer(text)
                 if not any(b.start <= m.start() < b.end for b in blocks)]
    names = _assign_databases(blocks, databases, len(text))
    targets = []
    for i, (block, database) in enumerate(zip(blocks, names)):
        previous_end = blocks[i - 1].end if i else 0
        goal = next((g for p, g in reversed(goals) if previous_end <= p < block.start), "")
        label = f"target {i + 1}" + (f" ({goal})" if goal else "")
        if not block.sql:
            raise FormatError(f"{label} has an empty SQL query")
        if not database:
            raise FormatError(f"{label} has no Database line")
        if known_databases is not None:
            database = _known_name(database, known_databases)
        targets.append(Target(goal, block.sql, database))
    return targets


# --- single SQL (correct_values, self_correct, refine) ------------------------------------------------------------

_SQL_LABEL = re.compile(r"^" + _DECORATION + r"(?:corrected\s+|fixed\s+|refined\s+|final\s+)?sql(?:\s+query)?"
                        r"[ \t*]*:[ \t*]*(.+)$", re.I | re.M)


def parse_sql(text):
    """One SQL query: the last Begin SQL/End SQL block, else the last ```sql fence, else a `SQL: ...` line, else the
    last bare SELECT/WITH statement. Trailing semicolons are dropped."""
    blocks = _sql_blocks(text)
    if blocks and blocks[-1].sql:
        return blocks[-1].sql
    labelled = [m.group(1) for m in _SQL_LABEL.finditer(text) if _looks_like_sql(_clean_sql(m.group(1)))]
    if labelled:
        return _clean_sql(labelled[-1])
    raise FormatError("no SQL query found: expected it between Begin SQL and End SQL")


# --- verdicts and return types -------------------------------------------------------------------------------------

def _choice(text, words, what):
    """The last bracketed marker, else the last labelled value, else a line holding only the word, else the first
    word of the text. `words` maps lowercase spellings to values."""
    alternatives = "|".join(sorted((re.escape(w).replace(r"\ ", r"[ _]") for w in words), key=len, reverse=True))
    # An echo of the instruction, e.g. "(YES) or (NO)", is not an answer.
    echo = rf"[\(\[]\s*(?:{alternatives})\s*[\)\]]\s*(?:or|/|,)\s*[\(\[]\s*(?:{alternatives})\s*[\)\]]"
    text = re.sub(echo, " ", text, flags=re.I)

    def value(word):
        return words[re.sub(r"[ _]+", " ", word.lower())]

    patterns = [
        rf"[\(\[]\s*\**\s*({alternatives})\s*\**\s*[\)\]]",
        rf"\b(?:final\s+)?(?:answer|verdict|decision|result|output|response|return\s+type|type)\s*\**\s*[:=\-]\s*"
        rf"[\s*`'\"]*({alternatives})\b",
        rf"^[\W_]*({alternatives})[\W_]*$",
    ]
    for pattern in patterns:
        found = re.findall(pattern, text, re.I | re.M)
        if found:
            return value(found[-1])
    first = re.match(rf"[\W_]*({alternatives})\b", text, re.I)
    if first:
        return value(first.group(1))
    raise FormatError(f"no {what} found")


_VERDICT_WORDS = {"yes": True, "true": True, "no": False, "false": False}


def parse_verdict(text):
    """A yes/no verdict: (YES)/(NO), [yes], `Answer: no`, true/false, a line or a first word that is the verdict."""
    return _choice(text, _VERDICT_WORDS, "(YES) or (NO) verdict")


_RETURN_WORDS = {
    "sql": RETURN_SQL_RESULT, "sql result": RETURN_SQL_RESULT, "sql results": RETURN_SQL_RESULT,
    "result": RETURN_SQL_RESULT, "table": RETURN_SQL_RESULT,
    "text": RETURN_TEXT, "text answer": RETURN_TEXT, "natural language": RETURN_TEXT, "sentence": RETURN_TEXT,
}


def parse_return_type(text):
    """RETURN_SQL_RESULT or RETURN_TEXT from (SQL)/(TEXT), `Return type: SQL result`, `text answer`, ..."""
    return _choice(text, _RETURN_WORDS, "return type, (SQL) or (TEXT),")


# --- free text -------------------------------------------------------------------------------------------------------

_TRAILING_SECTION = re.compile(r"^[ \t>*#\-]*(?:explanation|reasoning|notes?|sources?|sql(?:\s+query)?)[ \t*]*:",
                               re.I | re.M)


def _labelled_text(text, labels, what):
    """What follows the first line labelled with the earliest-listed label present, else the whole text."""
    body = text
    for label in labels:
        found = re.search(rf"^[ \t>*#\-]*(?:{label})[ \t*]*:[ \t*]*", text, re.I | re.M)
        if found:
            body = text[found.end():]
            break
    body = body.strip().strip("*").strip()
    if not body:
        raise FormatError(f"empty {what}")
    return body


def parse_answer(text):
    """The text answer: what follows the first `Answer:` label (up to an Explanation/Notes/SQL section), else the
    whole text."""
    body = _labelled_text(text, [r"(?:final\s+)?answer"], "answer")
    section = _TRAILING_SECTION.search(body)
    answer = body[:section.start()].strip() if section and section.start() > 0 else body
    return answer


def parse_rephrase(text):
    """The rephrased question: the rest of the `Rephrased:` line (else `Rewritten:`, else `Question:`), else the
    first non-empty line. Surrounding quotes are dropped."""
    body = _labelled_text(text, [r"rephrased(?:\s+question)?", r"rewritten(?:\s+question)?", r"question"],
                          "rephrased question")
    line = body.splitlines()[0].strip().strip("\"'\u201c\u201d").strip()
    if not line:
        raise FormatError("empty rephrased question")
    return line


_PART_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\(?\d+[.):]|q\d+\s*[:.)]|part\s+\d+\s*[:.)])\s*", re.I)


def parse_parts(text):
    """The sub-questions of a `Parts:` answer, one per numbered or bulleted line (`1.`, `2)`, `-`, `Q1:`); without
    numbered lines, the answer's one line is the only part. Empty parts are dropped; duplicates kept once."""
    body = _labelled_text(text, [r"parts", r"sub-?questions"], "parts")
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    numbered = [line for line in lines if _PART_MARKER.match(line)]
    if numbered:
        lines = [_PART_MARKER.sub("", line, count=1).strip() for line in numbered]
    elif len(lines) > 1:
        raise FormatError("several parts, but not on numbered lines")
    parts = []
    for line in lines:
        line = line.strip("\"'\u201c\u201d").strip()
        if line and line not in parts:
            parts.append(line)
    if not parts:
        raise FormatError("no parts")
    return parts


# --- asking with one format retry ----------------------------------------------------------------------------------

GENERIC_REMINDER = "Your answer could not be read. Answer again in exactly the format asked for, with nothing else."


def _as_message(message):
    if isinstance(message, dict):
        return {"role": message["role"], "content": message["content"]}
    role, content = message
    return {"role": role, "content": content}


def _format_reminder(parser):
    """The reminder of the parser's output contract (relmem.contracts), also through functools.partial (e.g.
    partial(parse_plan, known_databases=...)); else the parser's own `format_reminder`; else a generic one."""
    from .contracts import CONTRACTS
    base = getattr(parser, "func", parser)
    contract = next((c for c in CONTRACTS.values() if c.parser is base), None)
    return contract.reminder if contract else getattr(base, "format_reminder", None) or GENERIC_REMINDER


def ask_with_format(llm, messages, parser, stage, trace=None, reminder=None, **params):
    """Asks `llm` and parses the reply with `parser`; malformed output gets one retry with a format reminder.

    The retry sends the conversation so far plus the malformed reply and `reminder` (default: the parser's
    `format_reminder`, looked up through functools.partial too). Every attempt is appended to `trace` (a list)
    before the LLM is called, as a dict: stage, attempt (1 or 2), messages sent, output, usage (dict), cached,
    finish_reason, error (None when parsed). Returns the parsed value. Raises StageFailure (a relmem.Error) when
    the LLM call fails or the output is still malformed after the reminder; the trace then holds what happened.
    `llm` is a relmem LLM (or any object with chat(), or a callable fn(messages, **params)); `params` go to
    llm.chat (temperature, max_tokens, stop).
    """
    if not hasattr(llm, "chat"):
        from .llm import as_llm
        llm = as_llm(llm)
    reminder = reminder or _format_reminder(parser)
    conversation = ([{"role": "user", "content": messages}] if isinstance(messages, str)
                    else [_as_message(m) for m in messages])
    problem = None
    for attempt in (1, 2):
        entry = {"stage": stage, "attempt": attempt, "messages": list(conversation), "output": None, "usage": None,
                 "cached": None, "finish_reason": None, "error": None}
        if trace is not None:
            trace.append(entry)
        try:
            response = llm.chat(conversation, stage=stage, **params)
        except Error as error:
            entry["error"] = f"LLM call failed: {error}"
            raise StageFailure(stage, entry["error"]) from error
        entry.update(output=response.text, usage=response.usage.to_dict(), cached=response.cached,
                     finish_reason=response.finish_reason)
        try:
            return parser(response.text)
        except FormatError as error:
            problem = f"malformed output: {error}"
            entry["error"] = problem
            conversation = conversation + [{"role": "assistant", "content": response.text},
                                           {"role": "user", "content": reminder}]
    raise StageFailure(stage, f"{problem} (also after a format reminder)")
