"""The introspection snapshot of a server database: a SQLite file with the database's tables, columns, declared
types, primary and foreign keys, and its values, which every memory reads as it reads a SQLite database (cards,
distinct values, value statistics, refresh by file stamp). A table of at most FULL_COPY_ROWS rows is copied whole;
a larger one holds the VALUES_PER_COLUMN most frequent values of each column, once each, side by side.

The file is rewritten only when what it would hold changed (the digest in its manifest beside it), so a memory's
refresh sees an unchanged server as unchanged, and a changed schema or data as updated. Generated SQL never runs
on a snapshot: the catalog sends it to the server."""
import datetime
import decimal
import hashlib
import json
import os
import re
import sqlite3
import tempfile

from .. import Error

FULL_COPY_ROWS = 100000
VALUES_PER_COLUMN = 10000
MANIFEST_SUFFIX = ".source.json"
_PLAIN_TYPE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_ ]*)(\(\s*[+-]?\d+\s*(,\s*[+-]?\d+\s*)?\))?")


def snapshot_path(folder, name):
    return os.path.join(folder, name + ".sqlite")


def write_snapshot(database, tables, folder):
    """Writes (or keeps, when unchanged) the snapshot of `database` (a ServerDatabase) whose schema is `tables`
    ([TableInfo]) into `folder`; returns its path."""
    name = database.name
    if not name or "/" in name or name.startswith(".") or "\0" in name:
        raise Error(f"database name {name!r} of {database.url.redacted} cannot name a snapshot file")
    os.makedirs(folder, exist_ok=True)
    path = snapshot_path(folder, name)
    manifest_path = path + MANIFEST_SUFFIX
    if os.path.exists(path) and not os.path.exists(manifest_path):
        raise Error(f"{path} exists and is no relmem snapshot; it is left as it is (move it, or set RELMEM_HOME)")
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".sqlite", dir=folder)
    os.close(handle)
    try:
        digest = _fill(temporary, database, tables)
        manifest = {"source": database.url.redacted, "engine": database.engine, "digest": digest}
        if _read_manifest(manifest_path) == manifest and os.path.exists(path):
            os.unlink(temporary)
            return path
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    with open(manifest_path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(manifest, f)
    os.replace(manifest_path + ".tmp", manifest_path)
    return path


def _fill(path, database, tables):
    digest = hashlib.sha256()
    connection = sqlite3.connect(path)
    try:
        for table in tables:
            create = _create_table(connection, table)
            digest.update(create.encode("utf-8", "surrogatepass"))
            rows = [tuple(map(sqlite_value, row)) for row in _rows(database, table)]
            placeholders = ", ".join("?" * len(table.columns))
            connection.executemany(f"INSERT INTO {_quote(table.name)} VALUES ({placeholders})", rows)
            for row in rows:
                digest.update(repr(row).encode("utf-8", "surrogatepass"))
        connection.commit()
    finally:
        connection.close()
    return digest.hexdigest()


def _rows(database, table):
    names = [c.name for c in table.columns]
    if not names:
        return []
    if table.row_estimate <= FULL_COPY_ROWS:
        rows = database.read_rows(table.name, names, FULL_COPY_ROWS)
        if len(rows) <= FULL_COPY_ROWS:
            return rows
    columns = [[value for value, _ in database.frequent_values(table.name, name, VALUES_PER_COLUMN)]
               for name in names]
    height = max((len(values) for values in columns), default=0)
    return [tuple(values[i] if i < len(values) else None for values in columns) for i in range(height)]


def sqlite_value(value):
    """A server's value as the snapshot stores it, in the text both engines compare a literal of its type with:
    dates and times in ISO form ('2020-01-31', '2020-01-31 08:00:00'), exact numbers as integers when whole, else
    as floats; other types the driver returns (UUID, JSON, intervals) as their text."""
    if value is None or isinstance(value, (int, float, str, bytes)):
        return value
    if isinstance(value, decimal.Decimal):
        return int(value) if value.is_finite() and value == value.to_integral_value() else float(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _create_table(connection, table):
    """Creates the table in the snapshot with the server's declared types (reduced to what SQLite reads as a type
    name: `int(11) unsigned` is kept as `int(11)`, `enum('a','b')` as `enum`)."""
    lines = [f"{_quote(c.name)} {_declared_type(connection, c.type)}{' NOT NULL' if c.not_null else ''}"
             for c in table.columns]
    keys = [_quote(c.name) for c in table.columns if c.primary_key]
    if keys:
        lines.append(f"PRIMARY KEY ({', '.join(keys)})")
    for fk in table.foreign_keys:
        target = f" ({_quote(fk.to_column)})" if fk.to_column else ""
        lines.append(f"FOREIGN KEY ({_quote(fk.from_column)}) REFERENCES {_quote(fk.to_table)}{target}")
    sql = f"CREATE TABLE {_quote(table.name)} ({', '.join(lines)})"
    connection.execute(sql)
    return sql


def _declared_type(connection, declared):
    match = _PLAIN_TYPE.match(declared or "")
    candidate = (match.group(1).strip() + (match.group(2) or "")) if match else ""
    try:
        connection.execute(f"CREATE TEMP TABLE relmem_type_check (x {candidate})")
        connection.execute("DROP TABLE relmem_type_check")
        return candidate
    except sqlite3.Error:
        return "TEXT"


def _quote(identifier):
    return '"' + identifier.replace('"', '""') + '"'


def _read_manifest(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
