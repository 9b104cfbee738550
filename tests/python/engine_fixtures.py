"""The engine tests' fixtures: a PostgreSQL and a MariaDB server (one at a time, for the whole session) loaded with
the 20 Spider dev databases, and the catalog of every database of the server read as the SELECT-only role."""
import warnings

import pytest
from conftest import SPIDER
from engine_servers import load_dev_databases, mariadb_missing, mariadb_server, postgres_missing, postgres_server

from relmem.engines import WritableRoleWarning, open_catalog

DATABASES = SPIDER / "database"


def sqlite_path(db):
    return str(DATABASES / db / f"{db}.sqlite")


@pytest.fixture(scope="session", params=["postgresql", "mysql"])
def server(request):
    missing = postgres_missing() if request.param == "postgresql" else mariadb_missing()
    if missing:
        pytest.skip(missing)
    if not DATABASES.exists():
        pytest.skip(f"{DATABASES} is absent")
    start = postgres_server if request.param == "postgresql" else mariadb_server
    with start() as running:
        load_dev_databases(running, str(DATABASES))
        if running.engine == "postgresql":
            import psycopg
            with psycopg.connect(running.admin_url + "concert_singer", autocommit=True) as connection:
                connection.execute("CREATE SEQUENCE s")
        yield running


@pytest.fixture(scope="session")
def catalog(server, tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("error", WritableRoleWarning)  # the reader role can write nothing
        opened = open_catalog([server.reader_url], snapshots=str(tmp_path_factory.mktemp("snapshots")))
    yield opened
    opened.close()
