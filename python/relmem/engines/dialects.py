"""How the SQL-writing prompts name a database's engine and what they say about its dialect: the slots {engine}
and {dialect_notes} of the correction prompts, and {engines}, {query_kind}, {quote} and {dialect_notes} of the
plan. SQLite has no notes, so a SQLite collection's prompts read as they always did.

    sql_prompt_fields(catalog, "concert_singer")   # {"engine": "PostgreSQL", "dialect_notes": "\\n- PostgreSQL: ..."}
    plan_prompt_fields(catalog, ["concert_singer", "pets_1"])
"""
import dataclasses

from .catalog import SQLITE, engine_of
from .urls import MYSQL, POSTGRES


@dataclasses.dataclass(frozen=True)
class Dialect:
    engine: str   # "sqlite", "postgresql" or "mysql"
    name: str     # how prompts name it
    quote: str    # what a name with spaces is quoted with
    notes: tuple  # one prompt rule each

    @property
    def notes_text(self):
        """The notes as rule lines following a prompt's last rule ("" for none)."""
        return "".join(f"\n- {note}" for note in self.notes)


DIALECTS = {
    SQLITE: Dialect(SQLITE, "SQLite", "double quotes", ()),
    POSTGRES: Dialect(POSTGRES, "PostgreSQL", "double quotes", (
        'PostgreSQL: a name with capital letters or spaces goes in double quotes, spelled exactly as shown '
        '("Singer_ID"); single quotes make a string.',
        "PostgreSQL: = and LIKE compare strings with their letter case (ILIKE ignores it); in a GROUP BY query every "
        "selected column is grouped or aggregated; concatenate with ||; LIMIT n OFFSET m.")),
    MYSQL: Dialect(MYSQL, "MySQL/MariaDB", "backticks", (
        "MySQL/MariaDB: a name with spaces goes in backticks (`Home Town`); double quotes make a string, not a name.",
        "MySQL/MariaDB: = and LIKE ignore letter case (the default collation); concatenate with CONCAT(a, b), as || "
        "means OR; LIMIT n OFFSET m.")),
}


SQLITE_FIELDS = {"engine": "SQLite", "dialect_notes": "", "engines": "SQLite", "query_kind": "SQLite SELECT statement",
                 "quote": "double quotes"}


def dialect(catalog, database):
    """The Dialect of `database` in any catalog (SQLite's for a plain relmem.Catalog)."""
    return DIALECTS[engine_of(catalog, database)]


def sql_prompt_fields(catalog, database):
    """The dialect slots of a prompt about one query on `database`."""
    of = dialect(catalog, database)
    return {"engine": of.name, "dialect_notes": of.notes_text}


def plan_prompt_fields(catalog, databases):
    """The dialect slots of the plan over the candidate `databases`: one engine names itself; several name each
    database's and add the notes of each."""
    used = {}
    for database in databases:
        used.setdefault(dialect(catalog, database), []).append(database)
    if len(used) <= 1:
        only = next(iter(used), DIALECTS[SQLITE])
        return {"engines": only.name, "query_kind": f"{only.name} SELECT statement", "quote": only.quote,
                "dialect_notes": only.notes_text}
    per_database = "; ".join(f"{db}: {dialect(catalog, db).name}" for db in databases)
    notes = f"\n- Each query is written in its database's dialect: {per_database}." + "".join(
        d.notes_text for d in used)
    quote = "double quotes (backticks on MySQL/MariaDB)" if DIALECTS[MYSQL] in used else "double quotes"
    return {"engines": " and ".join(d.name for d in used), "query_kind": "SELECT statement in its database's dialect",
            "quote": quote, "dialect_notes": notes}
