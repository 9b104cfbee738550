"""The value memory's checks of a query's string literals, read as the query's engine compares strings.

The memory checks a server database on its snapshot, with SQLite's comparisons: = by letter case, LIKE ignoring it.
MySQL/MariaDB (default collations) compares both ignoring case, and some accents and trailing spaces too; PostgreSQL
compares both by case. So on MySQL/MariaDB a literal stored with other letter case is found as written (nothing to
correct), and a literal the snapshot lacks is asked of the server; on PostgreSQL a LIKE pattern is asked of the
server, which alone knows whether it matches with the case it is written in."""
import dataclasses

from .catalog import SQLITE, engine_of
from .urls import MYSQL, POSTGRES

FOUND, CASE, NOT_FOUND = "found", "found_ignoring_case", "not_found"


@dataclasses.dataclass
class EngineValueCheck:
    """A ValueCheck (relmem.values) with the status the engine gives the literal."""
    value: str
    table: str
    column: str
    op: str
    literal_index: int
    start: int
    end: int
    status: str
    case_matches: list
    similar: list

    @classmethod
    def of(cls, check, **changes):
        fields = {f.name: getattr(check, f.name) for f in dataclasses.fields(cls)}
        fields["case_matches"], fields["similar"] = list(fields["case_matches"]), list(fields["similar"])
        return cls(**{**fields, **changes})


def is_pattern(check):
    return "LIKE" in check.op.upper() or "GLOB" in check.op.upper()


def engine_checks(checks, feedback, catalog, db, lookup):
    """(checks, feedback) of the value memory for `db`, with the statuses its engine gives; as they are on SQLite.
    `lookup(table, column, text)`: the memory's similar stored values, for a literal found on the snapshot only."""
    engine = engine_of(catalog, db)
    if engine == SQLITE:
        return checks, feedback
    adjusted = [_adjust(check, engine, catalog, db, lookup) for check in checks]
    if all(a is c for a, c in zip(adjusted, checks)):
        return checks, feedback
    return adjusted, feedback_text(adjusted)


@dataclasses.dataclass
class EngineCorrection:
    """A CorrectionResult (relmem.values) without the replacements the engine does not need."""
    sql: str
    replacements: list
    checks: list
    lookups: list


def engine_correction(result, catalog, db, lookup):
    """The value memory's post-processing `result` for `db` as its engine compares: on MySQL/MariaDB a literal the
    server finds as written (in other letter case, say) keeps its spelling."""
    if engine_of(catalog, db) != MYSQL:
        return result
    checks, _ = engine_checks(result.checks, "", catalog, db, lookup)
    found = {c.literal_index for c in checks if c.status == FOUND}
    kept = [r for r in result.replacements if r.literal_index not in found]
    if len(kept) == len(result.replacements):
        return result
    from ..values import rewrite_string_literals
    restored = {r.literal_index: r.value for r in result.replacements if r.literal_index in found}
    return EngineCorrection(rewrite_string_literals(result.sql, restored), kept, checks, list(result.lookups))


def _adjust(check, engine, catalog, db, lookup):
    if engine == MYSQL and check.status == CASE:
        return EngineValueCheck.of(check, status=FOUND, case_matches=[])
    if engine == MYSQL and check.status == NOT_FOUND and _on_server(catalog, db, check, engine):
        return EngineValueCheck.of(check, status=FOUND, similar=[])
    if (engine == POSTGRES and is_pattern(check) and check.status == FOUND
            and not _on_server(catalog, db, check, engine)):
        similar = lookup(check.table, check.column, check.value.strip("%_"))
        return EngineValueCheck.of(check, status=NOT_FOUND, similar=list(similar))
    return check


def _on_server(catalog, db, check, engine):
    """Whether the server finds a row where the literal's column compares equal to it (or matches the pattern)."""
    if "GLOB" in check.op.upper():
        return check.status == FOUND
    quote = (lambda name: "`" + name.replace("`", "``") + "`") if engine == MYSQL else \
        (lambda name: '"' + name.replace('"', '""') + '"')
    literal = "'" + check.value.replace("'", "''") + "'"
    if engine == MYSQL:
        literal = literal.replace("\\", "\\\\")
    op = "LIKE" if is_pattern(check) else "="
    result = catalog.execute(db, f"SELECT 1 FROM {quote(check.table)} WHERE {quote(check.column)} {op} {literal} "
                                 "LIMIT 1", timeout=30.0, max_rows=1)
    return result.ok and bool(result.rows)


def feedback_text(checks):
    """The database retriever's feedback, worded as the value memory words it."""
    lines = []
    for check in checks:
        where = f"{check.table}.{check.column}"
        if check.status == CASE:
            lines.append(f"Value '{check.value}' not found in {where} as written; stored with other letter case: "
                         + ", ".join(f"'{v}'" for v in check.case_matches) + ".")
        elif check.status == NOT_FOUND:
            pattern = is_pattern(check)
            line = (f"{'Pattern' if pattern else 'Value'} '{check.value}' "
                    f"{'matches nothing in' if pattern else 'not found in'} {where}")
            if check.similar:
                line += "; similar stored values: " + ", ".join(f"'{c.value}'" for c in check.similar)
            lines.append(line + ".")
    return "".join(line + "\n" for line in lines)
