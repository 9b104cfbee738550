"""Connection URLs of server databases: postgresql://user:password@host:port/database?schema=name and
mysql://user:password@host:port/database (mariadb:// is the same engine). Without a database, every database of
the server that the role can read is one entry of the collection."""
import dataclasses
import urllib.parse

from .. import Error

POSTGRES = "postgresql"
MYSQL = "mysql"
SCHEMES = {"postgresql": POSTGRES, "postgres": POSTGRES, "mysql": MYSQL, "mariadb": MYSQL}
DEFAULT_PORTS = {POSTGRES: 5432, MYSQL: 3306}

def is_server_url(source):
    """True when `source` (a string) names a server database by URL rather than a file or folder."""
    scheme = str(source).split("://", 1)[0].lower() if "://" in str(source) else ""
    return scheme in SCHEMES

@dataclasses.dataclass(frozen=True)
class ServerURL:
    engine: str          # POSTGRES or MYSQL
    host: str
    port: int
    user: str
    password: str = dataclasses.field(repr=False)
    database: str = ""   # "" names every database of the server
    schema: str = ""     # Postgres only; "" is public
    options: tuple = ()  # other query parameters, passed to the driver as they are

    def with_database(self, database):
        return dataclasses.replace(self, database=database)

    @property
    def redacted(self):
        """The URL without its password, for messages and manifests."""
        user = urllib.parse.quote(self.user, safe="") + "@" if self.user else ""
        query = [("schema", self.schema)] if self.schema else []
        text = f"{self.engine}://{user}{self._host_text}:{self.port}/{urllib.parse.quote(self.database, safe='')}"
        return text + ("?" + urllib.parse.urlencode(query) if query else "")

    @property
    def _host_text(self):
        return f"[{self.host}]" if ":" in self.host else self.host

def parse_server_url(text):
    """A ServerURL; relmem.Error naming what is wrong for anything else."""
    try:
        parts = urllib.parse.urlsplit(str(text))
        port = parts.port
    except ValueError as error:
        raise Error(f"bad database URL {redact(text)}: {error}") from None
    engine = SCHEMES.get(parts.scheme.lower())
    if engine is None:
        raise Error(f"bad database URL {redact(text)}: the scheme must be one of {', '.join(sorted(SCHEMES))}")
    if not parts.hostname:
        raise Error(f"bad database URL {redact(text)}: no host")
    database = urllib.parse.unquote(parts.path.lstrip("/"))
    if "/" in database or "\0" in database:
        raise Error(f"bad database URL {redact(text)}: the path must be one database name")
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    schema = ""
    options = []
    for key, value in query:
        if key == "schema":
            if engine != POSTGRES:
                raise Error(f"bad database URL {redact(text)}: schema= is for PostgreSQL (a MySQL schema is "
                            "its database)")
            schema = value
        else:
            options.append((key, value))
    return ServerURL(engine, parts.hostname, port or DEFAULT_PORTS[engine],
                     urllib.parse.unquote(parts.username or ""), urllib.parse.unquote(parts.password or ""),
                     database, schema, tuple(options))

def redact(text):
    """`text` with the password of its user part replaced, so that no message shows a password."""
    text = str(text)
    scheme, sep, rest = text.partition("://")
    if not sep:
        return text
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        credentials, _, host = authority.rpartition("@")
        user = credentials.split(":", 1)[0]
        authority = f"{user}:***@{host}" if ":" in credentials else f"{user}@{host}"
    return f"{scheme}://{authority}{slash}{tail}"
