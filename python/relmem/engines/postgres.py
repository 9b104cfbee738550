"""PostgreSQL through psycopg 3: every statement in a transaction set READ ONLY (the session's default is read-only
as well), with statement_timeout, read through a server-side cursor so that the row cap bounds what is sent, and
rolled back; the connection is closed on any error."""
from .results import OPEN, PREPARE, REFUSED, RUNTIME, TIMEOUT
from .server import CONNECT_TIMEOUT_SECONDS, ColumnInfo, ForeignKeyInfo, ServerDatabase, TableInfo, readonly_rows

SYSTEM_DATABASES = ("template0", "template1")

_TABLES = """
SELECT c.oid, c.relname, c.reltuples::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.oid"""
_COLUMNS = """
SELECT a.attrelid, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum"""
_KEYS = """
SELECT k.conrelid, k.contype, a.attname, rc.relname, ra.attname FROM pg_constraint k
CROSS JOIN LATERAL unnest(k.conkey, k.confkey) WITH ORDINALITY AS u(attnum, fattnum, ord)
JOIN pg_namespace n ON n.oid = k.connamespace
JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum
LEFT JOIN pg_class rc ON rc.oid = k.confrelid
LEFT JOIN pg_attribute ra ON ra.attrelid = k.confrelid AND ra.attnum = u.fattnum
WHERE n.nspname = %s AND k.contype IN ('p', 'f') ORDER BY k.conrelid, k.conname, u.ord"""
_WRITABLE_TABLES = """
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relkind IN ('r', 'p')
AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE') ORDER BY c.relname"""
_ROLE = """
SELECT rolsuper, has_schema_privilege(%s, 'CREATE'), has_database_privilege(current_database(), 'CREATE')
FROM pg_roles WHERE rolname = current_user"""


def _driver():
    try:
        import psycopg
    except ImportError:
        from .. import Error
        raise Error("PostgreSQL needs psycopg 3 in relmem's Python environment: run `make setup` "
                    "(scripts/install_engines.sh)") from None
    return psycopg


class PostgresDatabase(ServerDatabase):
    engine = "postgresql"
    dialect_name = "PostgreSQL"

    @property
    def schema(self):
        return self.url.schema or "public"

    def _connect(self):
        psycopg = _driver()
        options = dict(self.url.options)
        settings = "-c default_transaction_read_only=on -c idle_in_transaction_session_timeout=60000"
        return psycopg.connect(host=self.url.host, port=self.url.port, user=self.url.user or None,
                               password=self.url.password or None, dbname=self.url.database or "postgres",
                               connect_timeout=CONNECT_TIMEOUT_SECONDS, application_name="relmem",
                               options=settings, autocommit=False, **options)

    def _run_readonly(self, connection, sql, timeout, max_rows, max_bytes):
        with connection.cursor() as setup:
            setup.execute("SET TRANSACTION READ ONLY")
            setup.execute(f"SET LOCAL statement_timeout = {max(1, int(timeout * 1000))}")
            setup.execute("SET LOCAL search_path = " + self.quote(self.schema))
        try:
            with connection.cursor(name="relmem_statement") as cursor:
                return readonly_rows(cursor, sql, max_rows, max_bytes)
        finally:
            connection.rollback()

    def _error_kind(self, error):
        psycopg = _driver()
        if isinstance(error, psycopg.errors.QueryCanceled):
            return TIMEOUT
        if isinstance(error, (psycopg.errors.ReadOnlySqlTransaction, psycopg.errors.InsufficientPrivilege)):
            return REFUSED
        if isinstance(error, psycopg.OperationalError) and self._connection is None:
            return OPEN  # while connecting
        if isinstance(error, psycopg.Error):
            state = getattr(error, "sqlstate", None) or ""
            return PREPARE if state.startswith("42") else RUNTIME
        return None

    def _message(self, error):
        diag = getattr(error, "diag", None)
        return (diag and diag.message_primary) or " ".join(str(error).split())

    def quote(self, identifier):
        return '"' + identifier.replace('"', '""') + '"'

    def databases(self):
        """The databases of the server the role may connect to."""
        rows = self.fetch("SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate "
                          "AND has_database_privilege(datname, 'CONNECT') ORDER BY datname")
        return [r[0] for r in rows if r[0] not in SYSTEM_DATABASES]

    def tables(self):
        tables = {oid: TableInfo(name, [], [], int(estimate)) for oid, name, estimate in self.fetch(_TABLES, (self.schema,))}
        for oid, name, declared, not_null in self.fetch(_COLUMNS, (self.schema,)):
            if oid in tables:
                tables[oid].columns.append(ColumnInfo(name, declared, False, bool(not_null)))
        for oid, kind, column, to_table, to_column in self.fetch(_KEYS, (self.schema,)):
            table = tables.get(oid)
            if table is None:
                continue
            if kind == "p":
                for c in table.columns:
                    c.primary_key = c.primary_key or c.name == column
            else:
                table.foreign_keys.append(ForeignKeyInfo(column, to_table, to_column or ""))
        return list(tables.values())

    def write_privileges(self):
        found = []
        superuser, create_in_schema, create_in_database = self.fetch(_ROLE, (self.schema,))[0]
        if superuser:
            found.append("superuser")
        writable = [r[0] for r in self.fetch(_WRITABLE_TABLES, (self.schema,))]
        if writable:
            shown = ", ".join(writable[:5]) + (", ..." if len(writable) > 5 else "")
            found.append(f"INSERT/UPDATE/DELETE/TRUNCATE on {len(writable)} table(s) ({shown})")
        if create_in_schema:
            found.append(f"CREATE in schema {self.schema}")
        if create_in_database:
            found.append("CREATE in the database")
        return found

