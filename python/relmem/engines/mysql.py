"""MySQL and MariaDB through PyMySQL: every statement in START TRANSACTION READ ONLY (the session's transactions are
read-only by default as well) under the statement time limit (MySQL's max_execution_time, MariaDB's
max_statement_time), read unbuffered so that the row cap bounds what is read, and rolled back; the connection is
closed on any error and after a capped result, whose rest is never read."""
from .results import OPEN, PREPARE, REFUSED, RUNTIME, TIMEOUT
from .server import CONNECT_TIMEOUT_SECONDS, ColumnInfo, ForeignKeyInfo, ServerDatabase, TableInfo, readonly_rows

SYSTEM_DATABASES = ("information_schema", "mysql", "performance_schema", "sys")
TIMEOUT_CODES = {3024, 1969, 1317, 1028}   # MySQL and MariaDB statement timeouts, interrupted query
REFUSED_CODES = {1792, 1142, 1143, 1227, 1370, 1044}  # read-only transaction, denied privileges
PREPARE_CODES = {1064, 1146, 1054, 1052, 1305, 1109, 1066, 1060, 1248, 1247, 1582, 1583, 1584, 1140, 1111, 1056}
# Privileges that change nothing; any other one in SHOW GRANTS means the role can write or administer.
READ_PRIVILEGES = {"SELECT", "USAGE", "SHOW VIEW", "SHOW DATABASES", "PROCESS", "REPLICATION CLIENT",
                   "BINLOG MONITOR", "SLAVE MONITOR", "REPLICA MONITOR"}

_TABLES = """
SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES
WHERE TABLE_SCHEMA = %s AND TABLE_TYPE = 'BASE TABLE' ORDER BY CREATE_TIME, TABLE_NAME"""
_COLUMNS = """
SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_KEY FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = %s ORDER BY TABLE_NAME, ORDINAL_POSITION"""
_FOREIGN_KEYS = """
SELECT TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
WHERE TABLE_SCHEMA = %s AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION"""


def _driver():
    try:
        import pymysql
    except ImportError:
        from .. import Error
        raise Error("MySQL/MariaDB needs PyMySQL in relmem's Python environment: run `make setup` "
                    "(scripts/install_engines.sh)") from None
    return pymysql


class MySQLDatabase(ServerDatabase):
    engine = "mysql"
    dialect_name = "MySQL/MariaDB"

    def __init__(self, url):
        super().__init__(url)
        self._mariadb = None

    def _connect(self):
        pymysql = _driver()
        options = dict(self.url.options)
        connection = pymysql.connect(host=self.url.host, port=self.url.port, user=self.url.user or None,
                                     password=self.url.password, database=self.url.database or None,
                                     connect_timeout=CONNECT_TIMEOUT_SECONDS, charset="utf8mb4", autocommit=True,
                                     **options)
        with connection.cursor() as cursor:
            cursor.execute("SET SESSION TRANSACTION READ ONLY")
            cursor.execute("SELECT VERSION()")
            self._mariadb = "mariadb" in cursor.fetchone()[0].lower()
        return connection

    def _run_readonly(self, connection, sql, timeout, max_rows, max_bytes):
        pymysql = _driver()
        connection.read_timeout = timeout + CONNECT_TIMEOUT_SECONDS  # the socket's own backstop
        with connection.cursor() as setup:
            if self._mariadb:
                setup.execute(f"SET SESSION max_statement_time = {max(0.001, float(timeout)):.3f}")
            else:
                setup.execute(f"SET SESSION max_execution_time = {max(1, int(timeout * 1000))}")
            setup.execute(f"SET SESSION sql_select_limit = {int(max_rows) + 1}")  # the server stops there
            setup.execute("START TRANSACTION READ ONLY")
        cursor = connection.cursor(pymysql.cursors.SSCursor)
        columns, rows, truncated = readonly_rows(cursor, sql, max_rows, max_bytes)
        if truncated:
            self.close()  # a statement with its own larger LIMIT has more rows: they go with the connection
        else:
            cursor.close()
            connection.rollback()
        return columns, rows, truncated

    def _error_kind(self, error):
        pymysql = _driver()
        if not isinstance(error, pymysql.MySQLError):
            return None
        code = error.args[0] if error.args and isinstance(error.args[0], int) else 0
        if code in TIMEOUT_CODES:
            return TIMEOUT
        if code in REFUSED_CODES:
            return REFUSED
        if code in PREPARE_CODES or isinstance(error, pymysql.ProgrammingError):
            return PREPARE
        if self._connection is None and isinstance(error, pymysql.OperationalError):
            return OPEN  # while connecting
        return RUNTIME

    def _message(self, error):
        text = error.args[1] if len(getattr(error, "args", ())) > 1 else error
        return " ".join(str(text).split())

    def close(self):
        # PyMySQL reads the rest of an unbuffered result when it is closed or collected, even from a closed
        # connection: the rest is dropped with the connection instead.
        result = getattr(self._connection, "_result", None)
        if result is not None:
            result.unbuffered_active = False
        super().close()

    def quote(self, identifier):
        return "`" + identifier.replace("`", "``") + "`"

    def fetch(self, sql, params=()):
        return super().fetch(sql, params or None)

    def databases(self):
        """The databases of the server the role can see."""
        return [r[0] for r in self.fetch("SHOW DATABASES") if r[0].lower() not in SYSTEM_DATABASES]

    def tables(self):
        database = self.url.database
        tables = {name: TableInfo(name, [], [], -1 if rows is None else int(rows))
                  for name, rows in self.fetch(_TABLES, (database,))}
        for table, name, declared, nullable, key in self.fetch(_COLUMNS, (database,)):
            if table in tables:
                tables[table].columns.append(ColumnInfo(name, declared, key == "PRI", nullable == "NO"))
        for table, column, to_table, to_column in self.fetch(_FOREIGN_KEYS, (database,)):
            if table in tables:
                tables[table].foreign_keys.append(ForeignKeyInfo(column, to_table, to_column or ""))
        return list(tables.values())

    def write_privileges(self):
        found = []
        for (grant,) in self.fetch("SHOW GRANTS FOR CURRENT_USER()"):
            text = str(grant)
            if not text.upper().startswith("GRANT ") or " ON " not in text.upper():
                continue
            privileges = text[6:text.upper().index(" ON ")]
            target = text[text.upper().index(" ON ") + 4:].split(" TO ")[0]
            writes = [p.strip() for p in privileges.split(",") if p.strip().upper() not in READ_PRIVILEGES]
            if writes:
                found.append(f"{', '.join(writes)} on {target}")
        return found
