"""A PostgreSQL primary and a streaming standby of the test's own (issue 28), on free ports in a
temporary folder, never the machine's server on 5432: ``initdb``, ``pg_basebackup -R`` (the standby
streams from the primary), synchronous replication (a commit the primary acknowledged is on the
standby too: what a failover must not lose; CloudNativePG's synchronous replicas, deploy/README),
``kill()`` (SIGKILL to the primary's whole process group: a lost machine) and ``promote()``
(``pg_ctl promote``). ``url(database)`` is the multi-host URL the services are given:
``postgresql://postgres@/<db>?host=127.0.0.1,127.0.0.1&port=<p>,<s>&target_session_attrs=read-write``
(libpq, psycopg and SQLAlchemy all read this form). As root the servers run as ``postgres``
(PostgreSQL refuses root)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from dps_testing.processes import free_port

PG_BIN = Path(os.environ.get("DPS_PG_BIN", "/usr/lib/postgresql/15/bin"))
START_SECONDS = 60


def _user() -> str | None:
    return "postgres" if os.geteuid() == 0 else None


class PgNode:
    def __init__(self, folder: Path, name: str, extra: tuple[str, ...] = ()):
        self.folder = folder
        self.data = folder / name
        self.port = free_port()
        self.name = name
        self._extra = extra
        self._server: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [
            str(PG_BIN / "postgres"), "-D", str(self.data), "-p", str(self.port), "-k", str(self.folder),
            "-c", "listen_addresses=127.0.0.1", "-c", "wal_level=replica", "-c", "max_wal_senders=5",
            "-c", "hot_standby=on", "-c", "fsync=off", "-c", "max_connections=60",  # fsync: a kill is not a power loss
            *self._extra,
        ]
        with open(self.folder / f"{self.name}.log", "ab") as log:
            self._server = subprocess.Popen(command, user=_user(), stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                psycopg.connect(self.dsn(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self._server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL {self.name} did not start: {self.log_tail()}") from None
                time.sleep(0.2)

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def kill(self) -> None:
        if self._server is not None and self._server.poll() is None:
            os.killpg(self._server.pid, signal.SIGKILL)
            self._server.wait(timeout=30)

    def stop(self) -> None:
        if self._server is not None and self._server.poll() is None:
            os.killpg(self._server.pid, signal.SIGTERM)  # smart shutdown is not needed: a fast one
            try:
                self._server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def log_tail(self) -> str:
        try:
            return (self.folder / f"{self.name}.log").read_text(errors="replace")[-2000:]
        except OSError:
            return "(no log)"


class FailoverPair:
    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="dpstest-pg-failover-"))
        user = _user()
        if user is not None:
            shutil.chown(self.folder, user)
        self.primary = PgNode(self.folder, "primary", ("-c", "synchronous_standby_names=*"))
        self.standby = PgNode(self.folder, "standby")

    def start(self) -> FailoverPair:
        self._run(str(PG_BIN / "initdb"), "-D", str(self.primary.data), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--no-sync")
        self.primary.start()
        self._run(str(PG_BIN / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(self.primary.port), "-U", "postgres",
                  "-D", str(self.standby.data), "-R", "-X", "stream", "--no-sync")
        self.standby.start()
        return self

    def url(self, database: str) -> str:
        return (f"postgresql://postgres@/{database}?host=127.0.0.1,127.0.0.1"
                f"&port={self.primary.port},{self.standby.port}&target_session_attrs=read-write")

    def create_database(self, name: str) -> None:
        with psycopg.connect(self.primary.dsn(), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')

    def promote(self) -> None:
        self._run(str(PG_BIN / "pg_ctl"), "promote", "-w", "-D", str(self.standby.data))

    def close(self) -> None:
        try:
            self.primary.kill()
            self.standby.kill()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _run(self, *command: str) -> None:
        done = subprocess.run(command, user=_user(), capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(command[0]).name} failed ({done.returncode}): {done.stdout}{done.stderr}")


@contextmanager
def private_server(*databases: str) -> Iterator[dict[str, str]]:
    """A PostgreSQL server of the test's own (one node) with ``databases`` made, their URLs by name:
    for a stack whose two of every process would take a large share of the machine's server's 100
    connections while the rest of the suite uses it (the two-of-every-process run once met "too many
    clients" there)."""
    folder = Path(tempfile.mkdtemp(prefix="dpstest-pg-private-"))
    user = _user()
    if user is not None:
        shutil.chown(folder, user)
    node = PgNode(folder, "server", ("-c", "max_connections=200"))
    try:
        done = subprocess.run([str(PG_BIN / "initdb"), "-D", str(node.data), "-U", "postgres", "--auth=trust",
                               "-E", "UTF8", "--no-sync"], user=user, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed ({done.returncode}): {done.stdout}{done.stderr}")
        node.start()
        with psycopg.connect(node.dsn(), autocommit=True) as admin:
            for name in databases:
                admin.execute(f'CREATE DATABASE "{name}"')
        yield {name: node.dsn(name) for name in databases}
    finally:
        node.kill()
        shutil.rmtree(folder, ignore_errors=True)
