"""What the gold simulator reads from a prompt, tolerant of wording: all prompt-format knowledge lives here.

It reads only the user's side of the conversation (system prompts hold worked examples that name databases), and
looks for a few stable landmarks: schema headers ("Database: NAME"), a query under a "Query:"/"SQL:" label, quoted
candidate values on the line of the literal they are offered for, and result blocks ("Query N on database NAME").
"""
import re

from .answers import parse_table

_DATABASE_HEADER = re.compile(r"^[ \t#>*\-]*database[ \t]*[:=][ \t]*[`'\"]?([\w][\w.\-]*)", re.I | re.M)
_QUERY_LABEL = re.compile(r"^[ \t#>*\-]*(?:current[ \t]+|original[ \t]+)?(?:sql[ \t]+)?(?:query|sql)\b[^:\n]{0,40}:"
                          r"[ \t]*\n", re.I | re.M)
_BARE_SQL = re.compile(r"^[ \t]*(?:select|with)\b.*?(?=\n[ \t]*\n|\Z)", re.I | re.M | re.S)
_CREATE_TABLE = re.compile(r"\bcreate[ \t]+(?:virtual[ \t]+)?table[ \t]+(?:if[ \t]+not[ \t]+exists[ \t]+)?"
                           r"(?:\"((?:[^\"]|\"\")+)\"|`([^`]+)`|\[([^\]]+)\]|([\w$]+))", re.I)
_QUOTED = re.compile(r"'((?:[^'\n]|'')*)'")
_RESULT_HEAD = re.compile(r"^[ \t#>*\-]*(?:query|result)[ \t]*(\d+)?[^\n]*?\bdatabase[ \t:]+[`'\"]?([\w][\w.\-]*)",
                          re.I | re.M)
_RESULT_LABEL = re.compile(r"^[ \t]*result[s]?[ \t]*:[ \t]*\n", re.I | re.M)
_SERVER_DIALECT = re.compile(r"\b(?:PostgreSQL|MySQL|MariaDB)\b")


def user_text(messages):
    """The user messages of a chat, joined: what the pipeline showed about this question."""
    return "\n\n".join(str(m.get("content", "")) for m in messages if m.get("role", "user") == "user")


def names_a_server_dialect(messages):
    """Whether the system prompt asks for SQL of a server engine (PostgreSQL, MySQL/MariaDB) rather than SQLite."""
    return any(_SERVER_DIALECT.search(str(m.get("content", ""))) for m in messages if m.get("role") == "system")


def shown_databases(text, known=()):
    """Databases whose schemas the prompt shows, in order: the names of "Database: NAME" headers. Without any
    header, the `known` names the text mentions as whole words."""
    names = list(dict.fromkeys(m.group(1).rstrip(".") for m in _DATABASE_HEADER.finditer(text)))
    if names:
        return names
    return [name for name in known if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text)]


def shown_tables(text, database):
    """Lower-case names of the tables whose CREATE TABLE the prompt shows under `database`'s schema header (up to the
    next header); None when the prompt shows no CREATE TABLE there (the schema is written some other way)."""
    headers = list(_DATABASE_HEADER.finditer(text))
    starts = [i for i, m in enumerate(headers) if m.group(1).rstrip(".") == database]
    if not starts:
        return None
    names = set()
    for i in starts:
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        for match in _CREATE_TABLE.finditer(text, headers[i].end(), end):
            names.add(next(g for g in match.groups() if g is not None).replace('""', '"').lower())
    return names or None


def query_in(text):
    """The SQL the prompt asks about: the paragraph under the last "Query:"/"SQL:" label, else the last paragraph
    that starts with SELECT or WITH; None when there is none."""
    labels = list(_QUERY_LABEL.finditer(text))
    if labels:
        body = text[labels[-1].end():]
        paragraph = re.split(r"\n[ \t]*\n", body.strip("\n"), maxsplit=1)[0].strip()
        if paragraph:
            return paragraph
    bare = [m.group().strip() for m in _BARE_SQL.finditer(text)]
    return bare[-1] if bare else None


def offered_values(text, literal):
    """Values the prompt offers for `literal`: the other quoted strings on each line whose first quoted string is
    the literal (as in "'Los Angeles' (restaurant.city =): 'LA', 'SF'" or "Value 'france' not found ...: 'France'")."""
    offered = []
    for line in text.splitlines():
        quoted = [q.replace("''", "'") for q in _QUOTED.findall(line)]
        if len(quoted) > 1 and quoted[0] == literal:
            offered += [q for q in quoted[1:] if q not in offered]
    return offered


def result_blocks(text):
    """[(database, rows or None)] for each query result the prompt shows: rows parsed from its table, None when the
    block shows no table (a failed query)."""
    heads = list(_RESULT_HEAD.finditer(text))
    blocks = []
    for i, head in enumerate(heads):
        line_end = text.find("\n", head.end())
        body = text[len(text) if line_end < 0 else line_end:heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        label = _RESULT_LABEL.search(body)
        table = parse_table(body[label.end():] if label else body)
        blocks.append((head.group(2).rstrip("."), table[0] if table else None))
    return blocks
