"""Shared by the hardening tests: the adversarial statements, a test collection and folder snapshots."""
import hashlib
import pathlib
import re
import sqlite3

FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "adversarial_sql.txt"

SCHEMA = """
    CREATE TABLE t (a INTEGER, b TEXT);
    INSERT INTO t VALUES (1, 'one'), (2, 'two');
    CREATE INDEX t_a ON t (a);
    CREATE TABLE big (n INTEGER);
    WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000) INSERT INTO big SELECT n FROM c;
    CREATE VIRTUAL TABLE docs USING fts5(body);
    INSERT INTO docs VALUES ('hello world'), ('goodbye');
    CREATE VIEW v AS SELECT a, upper(b) AS b FROM t;
"""


def statements():
    """(SQL bytes, must_succeed) for each statement of the fixture; \\xHH stands for the byte HH."""
    out = []
    for line in FIXTURE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        must_succeed = line.startswith("ok: ")
        text = line[4:] if must_succeed else line
        raw = re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m.group(1), 16)]), text.encode("utf-8"))
        out.append((raw, must_succeed))
    return out


def make_database(path, wal=False):
    db = sqlite3.connect(path)
    if wal:
        db.execute("PRAGMA journal_mode = WAL")
    db.executescript(SCHEMA)
    db.commit()
    db.close()  # the last connection of a WAL database checkpoints it and removes its -wal and -shm files
    return path


def snapshot(folder):
    """Every file below `folder` with its size, modification time and SHA-256."""
    files = {}
    for path in sorted(pathlib.Path(folder).rglob("*")):
        if path.is_file():
            stat = path.stat()
            files[str(path.relative_to(folder))] = (stat.st_size, stat.st_mtime_ns,
                                                    hashlib.sha256(path.read_bytes()).hexdigest())
    return files
