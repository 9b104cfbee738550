"""Server engines beside SQLite: PostgreSQL (psycopg 3) and MySQL/MariaDB (PyMySQL), read-only enforced by the
server's transaction and by a static gate (relmem.engines.gate).

    from relmem.engines import open_catalog
    catalog = open_catalog(["dbs/", "postgresql://reader:pw@db.example:5432/sales"])
"""
from .catalog import EngineCatalog, WritableRoleWarning, dialect_of, engine_of, local_sources, open_catalog
from .urls import is_server_url, parse_server_url


def __getattr__(name):
    # The gate needs sqlglot, installed with the server drivers; SQLite-only users never import it.
    if name in ("Refused", "check_statement"):
        from . import gate
        return getattr(gate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["EngineCatalog", "Refused", "WritableRoleWarning", "check_statement", "dialect_of", "engine_of",
           "is_server_url", "local_sources", "open_catalog", "parse_server_url"]
