"""A real PostgreSQL 15 server for the tests: the production Dagster instance's database.

``postgres_url`` initdb's a data folder, starts the server on a free loopback port (its unix
socket in the same folder, never in /var/run), creates a database and yields its URL, with a
password made up per server; the server stops at the end of the session. Skipped, saying why,
where PostgreSQL 15 is not installed.

PostgreSQL refuses to run as root: run by root, the server runs as the ``postgres`` OS user,
which owns its folder. That folder is a temporary one of its own beside pytest's, because
pytest's (``/tmp/pytest-of-root``) is open to root alone; it is removed at the end.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.harness import free_port

POSTGRES_BIN = Path("/usr/lib/postgresql/15/bin")
OS_USER = "postgres"  # who runs the server when the tests run as root
ROLE = "reuse_data"
DATABASE = "dagster"


def missing_postgres() -> str | None:
    """Why no server can be started here, or None."""
    if not (POSTGRES_BIN / "initdb").exists():
        return f"PostgreSQL 15 is not installed ({POSTGRES_BIN}/initdb): run `make setup` (Debian's postgresql-15)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(OS_USER)
        except KeyError:
            return f"running as root, and there is no {OS_USER!r} OS user for PostgreSQL to run as"
    return None


@contextmanager
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server on loopback with one database; yields its SQLAlchemy URL (psycopg2, the
    driver installed; role and password included)."""
    folder = Path(tempfile.mkdtemp(prefix="reuse-data-postgres-"))
    password_file = folder / "password"
    data, port, password = folder / "data", free_port(), secrets.token_hex(12)
    password_file.write_text(password + "\n", encoding="utf-8")
    as_server_user: list[str] = []
    if os.geteuid() == 0:
        server_user = pwd.getpwnam(OS_USER)
        for path in (folder, password_file):
            os.chown(path, server_user.pw_uid, server_user.pw_gid)
        as_server_user = ["runuser", "-u", OS_USER, "--"]

    def run(*command: str | Path) -> None:
        done = subprocess.run([*as_server_user, *map(str, command)], capture_output=True, text=True, cwd=folder)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(command[0]).name} exited {done.returncode}: {done.stdout}{done.stderr}")

    try:
        run(POSTGRES_BIN / "initdb", "-D", data, "-U", ROLE, f"--pwfile={password_file}", "--auth=scram-sha-256")
        password_file.unlink()
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        run(POSTGRES_BIN / "pg_ctl", "-D", data, "-l", folder / "server.log", "-o", options, "-w", "start")
        try:
            import psycopg2

            server = f"{ROLE}:{password}@127.0.0.1:{port}"
            connection = psycopg2.connect(f"postgresql://{server}/postgres")
            try:
                connection.autocommit = True
                connection.cursor().execute(f"CREATE DATABASE {DATABASE}")
            finally:
                connection.close()
            yield f"postgresql+psycopg2://{server}/{DATABASE}"
        finally:
            run(POSTGRES_BIN / "pg_ctl", "-D", data, "-m", "fast", "-w", "stop")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a database on a PostgreSQL 15 server of the session's own."""
    if reason := missing_postgres():
        pytest.skip(reason)
    with postgres_server() as url:
        yield url
