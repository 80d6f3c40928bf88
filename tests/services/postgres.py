"""A throwaway PostgreSQL cluster for the floor's tests (issue 13).

``postgres_cluster`` (session-scoped, so one per xdist worker) runs ``initdb`` into a directory
of its own (``tempfile.mkdtemp``, owned by the ``postgres`` account: the server refuses to run as
root, and pytest's ``tmp_path`` lies under a root-only directory), starts the server on a free
port of 127.0.0.1 with its unix socket in that directory, and stops it and removes the directory
at teardown, also when a test or the start itself failed.

``floor_db`` (per test) is a fresh, empty database of that cluster: its URL
``postgresql://postgres@127.0.0.1:PORT/NAME``. Connections from 127.0.0.1 as ``postgres`` are
trusted; every other role must give its password (scram-sha-256), so a test can show a wrong
password refused (``cluster.add_role``).

Without PostgreSQL's binaries (``/usr/lib/postgresql/*/bin``, not on PATH) the tests that use
these fixtures are skipped, saying so; under ``CI=true`` they fail (tests/required.py).
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from required import missing_tool

SERVER_ACCOUNT = "postgres"
START_TIMEOUT = 60  # seconds pg_ctl waits for the server (never a performance limit)


def server_binaries() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` holding initdb, pg_ctl and postgres."""
    def version(path: str) -> int:
        part = Path(path).parent.parent.name
        return int(part) if part.isdigit() else 0

    for initdb in sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version, reverse=True):
        bindir = Path(initdb).parent
        if all(os.access(bindir / name, os.X_OK) for name in ("initdb", "pg_ctl", "postgres")):
            return bindir
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PostgresCluster:
    bindir: Path
    root: Path
    port: int

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "sock"

    def url(self, dbname: str = "postgres", user: str = SERVER_ACCOUNT, password: str | None = None) -> str:
        who = f"{user}:{password}" if password is not None else user
        return f"postgresql://{who}@127.0.0.1:{self.port}/{dbname}"

    def password_file(self, path: Path, dbname: str, user: str, password: str) -> Path:
        """A libpq password file at ``path`` (for ``PGPASSFILE``) giving ``user``'s password for
        ``dbname`` on this cluster: the way an operator gives it, never in the URL."""
        path.write_text(f"127.0.0.1:{self.port}:{dbname}:{user}:{password}\n", encoding="utf-8")
        path.chmod(0o600)  # libpq ignores a password file others may read
        return path

    def sql(self, statement: str, dbname: str = "postgres") -> None:
        """Run one statement as the superuser (autocommit: CREATE DATABASE needs it)."""
        import psycopg

        with psycopg.connect(self.url(dbname), autocommit=True) as conn:
            conn.execute(statement)

    def create_database(self) -> str:
        name = f"floor_{uuid.uuid4().hex[:12]}"
        self.sql(f'CREATE DATABASE "{name}" STRATEGY = FILE_COPY')  # with fsync off, twice as fast as WAL_LOG
        return name

    def add_role(self, name: str, password: str, dbname: str) -> None:
        """A login role with a password and every right on ``dbname``."""
        self.sql(f"CREATE ROLE \"{name}\" LOGIN PASSWORD '{password}'")
        self.sql(f'GRANT ALL ON DATABASE "{dbname}" TO "{name}"')
        self.sql(f'GRANT ALL ON SCHEMA public TO "{name}"', dbname)


def _as_server_account(argv: list[str]) -> list[str]:
    return ["runuser", "-u", SERVER_ACCOUNT, "--", *argv] if os.geteuid() == 0 else argv


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(_as_server_account(argv), capture_output=True, text=True, timeout=START_TIMEOUT + 30)
    if done.returncode != 0:
        raise RuntimeError(f"{what} failed ({done.returncode}): {done.stdout}{done.stderr}")


def _chown_to_server_account(path: Path) -> None:
    if os.geteuid() == 0:
        import pwd

        account = pwd.getpwnam(SERVER_ACCOUNT)
        os.chown(path, account.pw_uid, account.pw_gid)


def _init(cluster: PostgresCluster) -> None:
    cluster.socket_dir.mkdir()
    _chown_to_server_account(cluster.socket_dir)
    _run([str(cluster.bindir / "initdb"), "-D", str(cluster.data), "-U", SERVER_ACCOUNT, "--auth-local=trust",
          "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"], "initdb")
    # The superuser from 127.0.0.1 without a password (tests only); anyone else with one.
    hba = cluster.data / "pg_hba.conf"
    hba.write_text(f"local all all trust\nhost all {SERVER_ACCOUNT} 127.0.0.1/32 trust\n"
                   "host all all 127.0.0.1/32 scram-sha-256\n", encoding="utf-8")


def _start(cluster: PostgresCluster) -> None:
    """Start the server; another port when the free one was taken meanwhile (a parallel worker)."""
    for attempt in range(3):
        try:
            return _start_on_port(cluster)
        except RuntimeError:
            if attempt == 2 or "could not bind" not in (cluster.root / "log").read_text(errors="replace"):
                raise
            cluster.port = free_port()


def _start_on_port(cluster: PostgresCluster) -> None:
    options = (f"-c listen_addresses=127.0.0.1 -p {cluster.port} -c unix_socket_directories={cluster.socket_dir} "
               "-c fsync=off -c synchronous_commit=on -c full_page_writes=off -c max_connections=100")
    _run([str(cluster.bindir / "pg_ctl"), "-D", str(cluster.data), "-o", options, "-l", str(cluster.root / "log"),
          "-w", "-t", str(START_TIMEOUT), "start"], "pg_ctl start")


def _stop(cluster: PostgresCluster) -> None:
    if (cluster.data / "postmaster.pid").exists():
        subprocess.run(_as_server_account([str(cluster.bindir / "pg_ctl"), "-D", str(cluster.data), "-m",
                                           "immediate", "-w", "stop"]), capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    bindir = server_binaries()
    if bindir is None:
        missing_tool("PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb): the floor's central store")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        missing_tool("runuser is not installed: PostgreSQL refuses to run as root")
    root = Path(tempfile.mkdtemp(prefix="shoectl-pg-"))
    _chown_to_server_account(root)
    cluster = PostgresCluster(bindir, root, free_port())
    try:
        _init(cluster)
        _start(cluster)
        yield cluster
    finally:
        _stop(cluster)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def floor_db(postgres_cluster: PostgresCluster) -> Iterator[str]:
    """The URL of a fresh, empty database (dropped after the test)."""
    name = postgres_cluster.create_database()
    yield postgres_cluster.url(name)
    postgres_cluster.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
