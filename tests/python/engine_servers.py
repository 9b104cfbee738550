"""Throwaway PostgreSQL and MariaDB servers for the engine tests: a temporary data directory, a free loopback port,
no system service, an admin role and a SELECT-only role; stopped and removed when the test session ends.
PostgreSQL refuses to run as root, so as root its files belong to `nobody` and it runs as that user."""
import contextlib
import dataclasses
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time

POSTGRES_BIN = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
MARIADB_SERVER = shutil.which("mariadbd") or shutil.which("mariadbd", path="/usr/sbin")
MARIADB_INSTALL = shutil.which("mariadb-install-db")
# The 20 databases of the Spider dev set.
DEV_DBS = ("battle_death car_1 concert_singer course_teach cre_Doc_Template_Mgt dog_kennels employee_hire_evaluation "
           "flight_2 museum_visit network_1 orchestra pets_1 poker_player real_estate_properties singer "
           "student_transcripts_tracking tvshow voter_1 world_1 wta_1").split()
ADMIN_PASSWORD = "admin-secret"
READER_PASSWORD = "reader-secret"


@dataclasses.dataclass
class Server:
    engine: str
    port: int
    admin_url: str   # may create databases
    reader_url: str  # SELECT only, on the databases granted with grant_reader()

    def url(self, database="", reader=True):
        return (self.reader_url if reader else self.admin_url) + database


def postgres_missing():
    if not POSTGRES_BIN or not os.path.exists(os.path.join(POSTGRES_BIN[-1], "initdb")):
        return "PostgreSQL server binaries (initdb, postgres) are not installed (apt-get install postgresql)"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root without runuser: PostgreSQL refuses to run as root"
    return None


def mariadb_missing():
    if not MARIADB_SERVER or not MARIADB_INSTALL:
        return "MariaDB server binaries (mariadbd, mariadb-install-db) are not installed (apt-get install mariadb-server)"
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(command, user=None, **kwargs):
    if user is not None:
        command = ["runuser", "-u", user, "--"] + command
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}")
    return result.stdout


@contextlib.contextmanager
def postgres_server():
    bin_dir = POSTGRES_BIN[-1]
    root = tempfile.mkdtemp(prefix="relmem-pg-")
    user = "nobody" if os.geteuid() == 0 else None
    data = os.path.join(root, "data")
    port = free_port()
    try:
        os.chmod(root, 0o755)
        with open(os.path.join(root, "pw"), "w") as f:
            f.write(ADMIN_PASSWORD)
        if user:
            entry = pwd.getpwnam(user)
            for path in (root, os.path.join(root, "pw")):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        _run([os.path.join(bin_dir, "initdb"), "-D", data, "-U", "admin", "--auth=scram-sha-256",
              f"--pwfile={root}/pw", "--no-sync", "-E", "UTF8", "--locale=C"], user=user)
        options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        _run([os.path.join(bin_dir, "pg_ctl"), "-D", data, "-o", options, "-l", f"{root}/log", "-w", "start"],
             user=user)
        admin = f"postgresql://admin:{ADMIN_PASSWORD}@127.0.0.1:{port}/"
        import psycopg
        with psycopg.connect(admin + "postgres", autocommit=True) as connection:
            connection.execute(f"CREATE ROLE reader LOGIN PASSWORD '{READER_PASSWORD}'")
        yield Server("postgresql", port, admin, f"postgresql://reader:{READER_PASSWORD}@127.0.0.1:{port}/")
    finally:
        if os.path.exists(os.path.join(data, "postmaster.pid")):
            subprocess.run([os.path.join(bin_dir, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"]
                           if not user else ["runuser", "-u", user, "--", os.path.join(bin_dir, "pg_ctl"), "-D",
                                             data, "-m", "immediate", "-w", "stop"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def mariadb_server():
    root = tempfile.mkdtemp(prefix="relmem-mariadb-")
    data = os.path.join(root, "data")
    port = free_port()
    process = None
    try:
        as_root = ["--user=root"] if os.geteuid() == 0 else []
        _run([MARIADB_INSTALL, "--no-defaults", f"--datadir={data}", "--auth-root-authentication-method=normal",
              "--skip-test-db", "--skip-name-resolve"] + as_root)
        process = subprocess.Popen(
            [MARIADB_SERVER, "--no-defaults", f"--datadir={data}", f"--port={port}", "--bind-address=127.0.0.1",
             f"--socket={root}/sock", f"--pid-file={root}/pid", "--skip-name-resolve", "--skip-log-bin",
             "--innodb-buffer-pool-size=64M", "--innodb-flush-log-at-trx-commit=0", "--skip-grant-tables=0",
             f"--log-error={root}/log"] + as_root,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import pymysql
        deadline = time.monotonic() + 60
        while True:
            try:
                connection = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)
                break
            except pymysql.OperationalError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"mariadbd did not start: {open(f'{root}/log').read()[-2000:]}")
                time.sleep(0.2)
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE USER admin@'127.0.0.1' IDENTIFIED BY '{ADMIN_PASSWORD}'")
            cursor.execute("GRANT ALL ON *.* TO admin@'127.0.0.1' WITH GRANT OPTION")
            cursor.execute(f"CREATE USER reader@'127.0.0.1' IDENTIFIED BY '{READER_PASSWORD}'")
        connection.close()
        yield Server("mysql", port, f"mysql://admin:{ADMIN_PASSWORD}@127.0.0.1:{port}/",
                     f"mysql://reader:{READER_PASSWORD}@127.0.0.1:{port}/")
    finally:
        if process is not None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(root, ignore_errors=True)


def load_dev_databases(server, databases_dir):
    """Copies the dev databases (DEV_DBS, from `databases_dir`/<db>/<db>.sqlite) into `server`, for the reader."""
    from relmem.engines.loader import load_sqlite
    for db in DEV_DBS:
        load_sqlite(os.path.join(databases_dir, db, f"{db}.sqlite"), server.admin_url)
        grant_reader(server, db)


def grant_reader(server, database):
    """SELECT on every table of `database` (created by the admin) to the reader role."""
    if server.engine == "postgresql":
        import psycopg
        with psycopg.connect(server.admin_url + database, autocommit=True) as connection:
            connection.execute(f'GRANT CONNECT ON DATABASE "{database}" TO reader')
            connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    else:
        import pymysql
        connection = pymysql.connect(**admin_arguments(server), autocommit=True)
        with connection.cursor() as cursor:
            cursor.execute(f"GRANT SELECT ON `{database}`.* TO reader@'127.0.0.1'")
        connection.close()


def admin_arguments(server, database=None):
    arguments = {"host": "127.0.0.1", "port": server.port, "user": "admin", "password": ADMIN_PASSWORD}
    if database:
        arguments["database"] = database
    return arguments
