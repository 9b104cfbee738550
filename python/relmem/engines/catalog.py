"""A catalog over SQLite files, folders and server databases given by URL.

    catalog = open_catalog(["spider/database", "postgresql://reader:pw@localhost/sales?schema=crm"])
    catalog.engine("sales.crm")                 # "postgresql"
    catalog.execute("sales.crm", "SELECT ...")  # runs on the server, read-only
    memories = Memories.build(catalog)          # every memory reads servers as it reads files

It is a relmem.Catalog: a server database appears in it through its introspection snapshot (relmem.engines.snapshot),
so every memory builds, saves and refreshes from it unchanged, while execute() sends SQL to the server itself.
Opening the catalog again re-reads the servers; a memory's refresh() then sees what changed."""
import concurrent.futures
import os
import warnings

from .. import Catalog, Error
from .snapshot import write_snapshot
from .urls import MYSQL, POSTGRES, is_server_url, parse_server_url
SQLITE = "sqlite"
DIALECTS = {SQLITE: "SQLite"}
INTROSPECTION_THREADS = 4  # databases read at once; chosen on the 20 Spider dev databases (docs/engines.md)


def _database_class(engine):
    """The server database class of `engine`, imported when a URL names it: a catalog of SQLite files alone needs
    neither the drivers nor sqlglot."""
    if engine == POSTGRES:
        from .postgres import PostgresDatabase
        return PostgresDatabase
    if engine == MYSQL:
        from .mysql import MySQLDatabase
        return MySQLDatabase
    raise Error(f"no server engine {engine!r}")


class WritableRoleWarning(UserWarning):
    """The role relmem connects as may write; relmem still runs every statement read-only."""


def snapshot_home():
    home = os.environ.get("RELMEM_HOME", os.path.join(os.path.expanduser("~"), ".cache", "relmem"))
    return os.path.join(home, "engines")


class EngineCatalog(Catalog):
    def __init__(self, sources, snapshots=None):
        Catalog.__init__(self, [])
        self._servers = {}
        self._skipped = []
        self.sources = list(sources)
        self.warnings = []
        snapshots = snapshots or snapshot_home()
        try:
            for source in self.sources:
                if is_server_url(source):
                    self._add_server(parse_server_url(source), snapshots)
                elif os.path.isdir(source):
                    folder = Catalog(source)
                    for db in folder.databases:
                        self.add(folder.path(db))
                    self._skipped += folder.skipped
                else:
                    self.add(source)
        except BaseException:
            self.close()
            raise

    def _add_server(self, url, snapshots):
        engine = _database_class(url.engine)
        if url.database:
            urls = [url]
        else:
            lister = engine(url)
            try:
                urls = [url.with_database(name) for name in lister.databases()]
            finally:
                lister.close()
            if not urls:
                raise Error(f"{url.redacted}: the server shows no database this role can read")
        folder = os.path.join(snapshots, url.engine, f"{url.host}_{url.port}_{url.user or 'default'}")
        with concurrent.futures.ThreadPoolExecutor(min(INTROSPECTION_THREADS, len(urls))) as pool:
            futures = [pool.submit(_introspect, engine, one, folder, not url.database) for one in urls]
        introspected = [future.result() for future in futures if not future.exception()]
        try:
            failed = next((future.exception() for future in futures if future.exception()), None)
            if failed:
                raise failed
            while introspected:
                database, privileges, tables, path = introspected[0]
                self._warn_if_writable(database, privileges)
                if path is None:
                    self._skipped.append((database.url.redacted, "no tables the role can see"))
                    database.close()
                elif database.name in self:
                    raise Error(f"duplicate database name '{database.name}': {database.url.redacted} and "
                                f"{self.source(database.name)}")
                else:
                    self.add(path)
                    database.set_names([t.name for t in tables] + [c.name for t in tables for c in t.columns])
                    self._servers[database.name] = database
                introspected.pop(0)
        except BaseException:
            for database, *_ in introspected:
                database.close()
            raise

    def _warn_if_writable(self, database, privileges):
        if privileges:
            message = (f"{database.url.redacted}: the role can write ({'; '.join(privileges)}); relmem runs every "
                       "statement read-only, but a SELECT-only role is safer (see README, Server databases)")
            self.warnings.append(message)
            warnings.warn(message, WritableRoleWarning, stacklevel=3)

    @property
    def skipped(self):
        """(path, reason) for each file a folder scan could not read."""
        return list(self._skipped)

    def engine(self, db):
        """"sqlite", "postgresql" or "mysql"."""
        self.schema(db)  # unknown names raise relmem.Error
        server = self._servers.get(db)
        return server.engine if server else SQLITE

    def dialect(self, db):
        """How prompts name the SQL dialect of `db`: "SQLite", "PostgreSQL" or "MySQL/MariaDB"."""
        server = self._servers.get(db)
        return server.dialect_name if server else DIALECTS[self.engine(db)]

    def source(self, db):
        """The file of a SQLite database, the URL (without password) of a server database."""
        server = self._servers.get(db)
        return server.url.redacted if server else self.path(db)

    def execute(self, db, sql, timeout=10.0, max_rows=10000, max_bytes=64 << 20):
        server = self._servers.get(db)
        if server is None:
            return Catalog.execute(self, db, sql, timeout=timeout, max_rows=max_rows, max_bytes=max_bytes)
        return server.execute(sql, timeout=timeout, max_rows=max_rows, max_bytes=max_bytes)

    def close(self):
        """Closes the server connections (they are opened again when needed)."""
        for server in self._servers.values():
            server.close()

    def __repr__(self):
        return f"EngineCatalog({len(self)} databases, {len(self._servers)} on servers)"


def _introspect(engine, url, folder, listing):
    """(database, its write privileges, its tables, its snapshot's path) of one server database; the path is None
    for a database without tables found by listing the server."""
    database = engine(url)
    try:
        privileges = database.write_privileges()
        tables = database.tables()
        path = None if listing and not tables else write_snapshot(database, tables, folder)
        return database, privileges, tables, path
    except BaseException:
        database.close()
        raise


def open_catalog(sources, snapshots=None):
    """A relmem.Catalog of `sources` (a folder, a file or a URL, or a list of them): the plain SQLite catalog when
    every source is a file or folder, an EngineCatalog when one is a server URL."""
    sources = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if len(sources) == 1 and not is_server_url(sources[0]):
        return Catalog(sources[0])
    return EngineCatalog([os.fspath(s) if not is_server_url(s) else s for s in sources], snapshots)


def local_sources(sources):
    """The files and folders among `sources` (a source or a list of them): what a command reads from disk."""
    sources = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources or ())
    return [s for s in sources if not is_server_url(s)]


def engine_of(catalog, db):
    """The engine of `db` in any catalog ("sqlite" for a plain relmem.Catalog)."""
    return catalog.engine(db) if isinstance(catalog, EngineCatalog) else SQLITE


def dialect_of(catalog, db):
    return catalog.dialect(db) if isinstance(catalog, EngineCatalog) else DIALECTS[SQLITE]
