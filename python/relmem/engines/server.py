"""What the two server engines share: the introspected schema, the executor's steps around the driver (gate,
identifier case, read-only transaction, caps, error kinds), and the connection kept between calls, closed on any
error so that no failed statement leaves a session behind."""
import abc
import dataclasses

from .. import Error
from .gate import Refused, check_statement
from .identifier_case import match_identifier_case
from .results import OPEN, REFUSED, TOO_LARGE, EngineResult, ResultTooLarge, collect_rows, failure

CONNECT_TIMEOUT_SECONDS = 10


@dataclasses.dataclass
class ColumnInfo:
    name: str
    type: str
    primary_key: bool = False
    not_null: bool = False


@dataclasses.dataclass
class ForeignKeyInfo:
    from_column: str
    to_table: str
    to_column: str


@dataclasses.dataclass
class TableInfo:
    name: str
    columns: list
    foreign_keys: list = dataclasses.field(default_factory=list)
    row_estimate: int = -1  # the server's statistics; -1 when it has none


class ServerDatabase(abc.ABC):
    """One database of a server (a Postgres database and schema, or a MySQL database)."""

    engine = ""        # "postgresql" or "mysql"
    dialect_name = ""  # how prompts name the SQL dialect

    def __init__(self, url):
        self.url = url
        self._connection = None
        self._names = None

    # --- driver-specific parts -------------------------------------------------------------------------------
    @abc.abstractmethod
    def _connect(self):
        """A new driver connection whose session is read-only by default."""

    @abc.abstractmethod
    def _run_readonly(self, connection, sql, timeout, max_rows, max_bytes):
        """(columns, rows, truncated) of `sql` run in a read-only transaction with the statement timeout, rolled
        back before returning; leaves the connection reusable or raises."""

    @abc.abstractmethod
    def _error_kind(self, error):
        """The relmem error kind of a driver exception, or None when it is no driver error."""

    @abc.abstractmethod
    def tables(self):
        """[TableInfo] of the database, in creation order where the server keeps it."""

    @abc.abstractmethod
    def write_privileges(self):
        """What the role may write or change (text per privilege); empty for a SELECT-only role."""

    @abc.abstractmethod
    def quote(self, identifier):
        """`identifier` quoted for this engine."""

    # --- shared ------------------------------------------------------------------------------------------------
    @property
    def name(self):
        """The collection's name of this database: the database, then the Postgres schema when one is named."""
        return self.url.database + (f".{self.url.schema}" if self.url.schema else "")

    @abc.abstractmethod
    def _message(self, error):
        """The server's words for a driver exception, on one line."""

    def connection(self):
        """The kept connection, opened when there is none; relmem.Error saying why when it cannot be."""
        if self._connection is None:
            try:
                self._connection = self._connect()
            except Error:
                raise
            except Exception as error:
                if self._error_kind(error) is None:
                    raise
                raise Error(f"cannot connect to {self.url.redacted}: {self._message(error)}") from None
        return self._connection

    def close(self):
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()
            except Exception:  # closing a broken connection: it is gone either way
                pass

    def set_names(self, names):
        """The table and column names of the database, for matching unquoted identifiers to their case."""
        self._names = list(names)

    def execute(self, sql, timeout=10.0, max_rows=10000, max_bytes=64 << 20):
        """Runs one read-only SELECT; never raises for SQL problems (they come back as EngineResult.error)."""
        try:
            tree = check_statement(sql, self.engine)
        except Refused as refusal:
            return failure(REFUSED, refusal)
        if self._names:
            sql = match_identifier_case(tree, sql, self._names, self.engine)
        try:
            connection = self.connection()
        except Error as error:
            return failure(OPEN, error)
        try:
            columns, rows, truncated = self._run_readonly(connection, sql, timeout, max_rows, max_bytes)
        except ResultTooLarge as error:
            self.close()
            return failure(TOO_LARGE, error)
        except Exception as error:
            kind = self._error_kind(error)
            self.close()
            if kind is None:
                raise
            return failure(kind, self._message(error))
        return EngineResult(columns, rows, truncated)

    def fetch(self, sql, params=()):
        """Rows of relmem's own read-only query (introspection); raises the driver's error."""
        try:
            cursor = self.connection().cursor()
            cursor.execute(sql, params)
            rows = cursor.fetchall()
            cursor.close()
            self.connection().rollback()
            return rows
        except Exception:
            self.close()
            raise

    def read_rows(self, table, columns, limit):
        """Up to `limit` + 1 rows of `columns` of `table` (one more tells that the table has more)."""
        names = ", ".join(self.quote(c) for c in columns)
        return self._read(f"SELECT {names} FROM {self.quote(table)} LIMIT {int(limit) + 1}")

    def frequent_values(self, table, column, limit):
        """[(value, count)] of the `limit` most frequent non-null values of a column, most frequent first."""
        c = self.quote(column)
        return self._read(f"SELECT {c}, count(*) AS n FROM {self.quote(table)} WHERE {c} IS NOT NULL "
                          f"GROUP BY {c} ORDER BY n DESC, {c} LIMIT {int(limit)}")

    def _read(self, sql):
        """Rows of relmem's own query on names the server listed: on the kept read-only session, one round trip,
        without the executor's gate and per-statement settings."""
        try:
            return self.fetch(sql)
        except Exception as error:
            if self._error_kind(error) is None:
                raise
            raise Error(f"reading {self.url.redacted}: {self._message(error)}") from None


def readonly_rows(cursor, sql, max_rows, max_bytes):
    """Executes `sql` on a driver cursor and reads at most max_rows rows: (columns, rows, truncated)."""
    cursor.execute(sql)
    columns = [d[0] for d in cursor.description or ()]
    rows, truncated = collect_rows(cursor.fetchmany, max_rows, max_bytes)
    return columns, rows, truncated
