"""Unquoted identifiers written in another case than the database's: Postgres folds them to lowercase and MySQL
compares table names by case on most servers, so `SELECT Name FROM Singer` would miss a table created as "Singer"
that SQLite finds. Such identifiers are quoted with the database's own spelling; other SQL is sent as written."""
from sqlglot import exp

from .gate import SQLGLOT_DIALECTS


def match_identifier_case(tree, sql, names, engine):
    """`sql` with each unquoted identifier that names exactly one of `names` case-insensitively, in a case the
    engine would not find, quoted as the name is spelled; `sql` itself when none needs it."""
    spellings = {}
    for name in names:
        spellings.setdefault(name.lower(), set()).add(name)
    changed = False
    for identifier in tree.find_all(exp.Identifier):
        if identifier.quoted:
            continue
        found = spellings.get(identifier.name.lower())
        if not found or len(found) != 1:
            continue
        spelled = next(iter(found))
        found_as_written = spelled == spelled.lower() if engine == "postgresql" else spelled == identifier.name
        if not found_as_written:
            identifier.set("this", spelled)
            identifier.set("quoted", True)
            changed = True
    return tree.sql(dialect=SQLGLOT_DIALECTS[engine]) if changed else sql
