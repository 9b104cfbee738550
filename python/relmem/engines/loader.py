"""Copies SQLite databases into a PostgreSQL or MySQL/MariaDB server (for tests, benchmarks and trying relmem on a
server), as a role that may create databases: one new database per file, named as the file, names kept as they
are written. Each column's server type follows its SQLite type and the values it really holds (SQLite lets an
INTEGER column hold text): every value must fit, or the column becomes text. Keys are added after the rows; a key
the data does not allow (duplicates, NULLs, a reference to a non-unique column) is left out and listed.

    report = load_sqlite("concert_singer.sqlite", "postgresql://admin:pw@localhost:5432/")
    report.columns    # [(table, column, sqlite type, server type)]
    report.skipped    # [(what, reason)]
"""
import dataclasses
import os
import sqlite3

from .. import Error
from .urls import MYSQL, POSTGRES, parse_server_url

INT32 = 2 ** 31 - 1
INT64 = 2 ** 63 - 1
MYSQL_KEY_CHARS = 700  # longest VARCHAR kept as VARCHAR: a MySQL key holds at most 3072 bytes of utf8mb4


@dataclasses.dataclass
class LoadReport:
    database: str
    tables: int = 0
    rows: int = 0
    columns: list = dataclasses.field(default_factory=list)  # (table, column, sqlite type, server type)
    skipped: list = dataclasses.field(default_factory=list)  # (what, reason)


def server_type(engine, values):
    """The server type that holds every one of `values` (a column's non-null values)."""
    if values and all(isinstance(v, int) for v in values):
        return "integer" if all(-INT32 <= v <= INT32 for v in values) else "bigint"
    if values and all(isinstance(v, (int, float)) for v in values):
        return "double precision" if engine == POSTGRES else "double"
    if values and all(isinstance(v, bytes) for v in values):
        return "bytea" if engine == POSTGRES else "longblob"
    if engine == POSTGRES:
        return "text"
    longest = max((len(str(v)) for v in values), default=0)
    return f"varchar({max(longest, 255)})" if longest <= MYSQL_KEY_CHARS else "longtext"


def load_sqlite(path, url, name=None):
    """Creates database `name` (default: the file's stem) on the server of `url` and copies `path` into it.
    Refuses (relmem.Error) when the database exists already."""
    server = parse_server_url(url)
    name = name or os.path.splitext(os.path.basename(path))[0]
    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    source.text_factory = lambda b: b.decode("utf-8", "replace")
    try:
        tables = _read_tables(source)
        loader = _PostgresLoader(server, name) if server.engine == POSTGRES else _MySQLLoader(server, name)
        try:
            return loader.load(source, tables)
        finally:
            loader.close()
    finally:
        source.close()


def _read_tables(source):
    tables = []
    for (table,) in source.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                   "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"):
        info = source.execute(f"PRAGMA table_info({_dq(table)})").fetchall()
        keys = [row[1] for row in sorted((r for r in info if r[5]), key=lambda r: r[5])]
        fks = [(r[3], r[2], r[4]) for r in source.execute(f"PRAGMA foreign_key_list({_dq(table)})")]
        tables.append((table, [(r[1], r[2] or "") for r in info], keys, fks))
    return tables


def _dq(name):
    return '"' + name.replace('"', '""') + '"'


class _Loader:
    engine = ""

    def __init__(self, url, name):
        self.url, self.name = url, name
        self.admin = self._connect(url)
        self._create_database()
        self.connection = self._connect(url.with_database(name))

    def close(self):
        for connection in (getattr(self, "connection", None), self.admin):
            if connection is not None:
                connection.close()

    def load(self, source, tables):
        report = LoadReport(self.name)
        for table, columns, keys, _ in tables:
            rows = source.execute(f"SELECT {', '.join(_dq(c) for c, _ in columns)} FROM {_dq(table)}").fetchall()
            types = []
            for i, (column, declared) in enumerate(columns):
                values = [row[i] for row in rows if row[i] is not None]
                types.append(server_type(self.engine, values))
                report.columns.append((table, column, declared, types[-1]))
            names = ", ".join(f"{self.quote(c)} {t}" for (c, _), t in zip(columns, types))
            self.run(f"CREATE TABLE {self.quote(table)} ({names})")
            self.insert(table, [c for c, _ in columns], rows)
            report.tables += 1
            report.rows += len(rows)
            if keys:
                self.try_key(report, f"primary key of {table}",
                             f"ALTER TABLE {self.quote(table)} ADD PRIMARY KEY ({', '.join(map(self.quote, keys))})")
        for table, _, _, fks in tables:
            for column, to_table, to_column in fks:
                if to_column:
                    self.index_referenced(to_table, to_column)
                target = f" ({self.quote(to_column)})" if to_column else ""
                self.try_key(report, f"foreign key {table}.{column} -> {to_table}{'.' + to_column if to_column else ''}",
                             f"ALTER TABLE {self.quote(table)} ADD FOREIGN KEY ({self.quote(column)}) "
                             f"REFERENCES {self.quote(to_table)}{target}{self.unchecked}")
        self.finish()
        return report

    def try_key(self, report, what, sql):
        try:
            self.run(sql)
        except Exception as error:  # the driver's error: the data does not allow this key
            self.rollback()
            report.skipped.append((what, " ".join(str(error).split())[:200]))


class _PostgresLoader(_Loader):
    engine = POSTGRES
    unchecked = " NOT VALID"  # rows that reference nothing stay, as SQLite kept them

    def _connect(self, url):
        import psycopg
        return psycopg.connect(host=url.host, port=url.port, user=url.user or None, password=url.password or None,
                               dbname=url.database or "postgres", autocommit=True, **dict(url.options))

    def _create_database(self):
        if self.admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.name,)).fetchone():
            raise Error(f"database {self.name} exists on {self.url.redacted}; relmem loads only into new databases")
        self.admin.execute(f"CREATE DATABASE {self.quote(self.name)}")

    def quote(self, name):
        return _dq(name)

    def run(self, sql):
        self.connection.execute(sql)

    def rollback(self):
        pass  # autocommit: a failed statement leaves nothing behind

    def insert(self, table, columns, rows):
        with self.connection.cursor() as cursor:
            with cursor.copy(f"COPY {self.quote(table)} ({', '.join(map(self.quote, columns))}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)

    def index_referenced(self, table, column):
        pass  # a Postgres reference needs a unique key, which an index cannot stand in for

    def finish(self):
        self.connection.execute("ANALYZE")


class _MySQLLoader(_Loader):
    engine = MYSQL
    unchecked = ""

    def _connect(self, url):
        import pymysql
        return pymysql.connect(host=url.host, port=url.port, user=url.user or None, password=url.password,
                               database=url.database or None, charset="utf8mb4", autocommit=True,
                               **dict(url.options))

    def _create_database(self):
        with self.admin.cursor() as cursor:
            if cursor.execute("SHOW DATABASES LIKE %s", (self.name.replace("_", "\\_"),)):
                raise Error(f"database {self.name} exists on {self.url.redacted}; relmem loads only into new "
                            "databases")
            cursor.execute(f"CREATE DATABASE {self.quote(self.name)} CHARACTER SET utf8mb4")

    def quote(self, name):
        return "`" + name.replace("`", "``") + "`"

    def run(self, sql):
        with self.connection.cursor() as cursor:
            cursor.execute("SET SESSION foreign_key_checks = 0")  # rows that reference nothing stay
            cursor.execute(sql)

    def rollback(self):
        self.connection.rollback()

    def insert(self, table, columns, rows):
        placeholders = ", ".join(["%s"] * len(columns))
        with self.connection.cursor() as cursor:
            for start in range(0, len(rows), 1000):
                cursor.executemany(f"INSERT INTO {self.quote(table)} ({', '.join(map(self.quote, columns))}) "
                                   f"VALUES ({placeholders})", rows[start:start + 1000])

    def index_referenced(self, table, column):
        """InnoDB needs an index on a referenced column; one that is not a key gets one."""
        try:
            self.run(f"ALTER TABLE {self.quote(table)} ADD INDEX ({self.quote(column)})")
        except Exception:  # a column that cannot be indexed (long text): the foreign key is then listed as skipped
            self.rollback()

    def finish(self):
        with self.connection.cursor() as cursor:
            cursor.execute("SHOW TABLES")
            for (table,) in cursor.fetchall():
                cursor.execute(f"ANALYZE TABLE {self.quote(table)}")
                cursor.fetchall()
