"""A service's database connections ended under load: what the server answers meanwhile.

``ended_connections(database_url, application_name, seconds)`` ends every backend of that name on
that database (``pg_terminate_backend``, as an operator, a failover or a proxy would), over and over
for ``seconds``; ``Load`` sends requests from a few threads meanwhile and tallies the answers. A lost
connection must be answered 2xx (retried) or 503 problem+json with Retry-After, never another 5xx
(``dps_common.db_retry``). ``rides_out_ended_connections`` is the whole check: kills under load,
then every answer 2xx again.

``private_login(database_url)``: a login role of the test's own for a worker, whose ``refused()``
makes the database unreachable for that worker alone, for as long as the test says."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import psycopg
import requests
from sqlalchemy.engine import make_url

KILLER_NAME = "dps-connection-killer"
Call = Callable[[requests.Session], requests.Response]


def ended_connections(database_url: str, application_name: str, seconds: float) -> set[int]:
    """End the backends named ``application_name`` on ``database_url``'s database, again and again
    for ``seconds``; the backends' ids, once every one of them is gone."""
    ended: set[int] = set()
    with psycopg.connect(database_url, autocommit=True, application_name=KILLER_NAME) as admin:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            rows = admin.execute(  # the call in the select list: only for the rows the filter keeps
                "SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND application_name = %s AND pid <> pg_backend_pid()",
                (application_name,),
            ).fetchall()
            ended.update(pid for pid, _ in rows)
            time.sleep(0.005)
        for _ in range(500):  # a backend leaves pg_stat_activity a moment after it was told to end
            if not admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (list(ended),)).fetchone():
                break
            time.sleep(0.01)
    return ended


@dataclass
class Tally:
    statuses: Counter[int] = field(default_factory=Counter)
    refused: list[str] = field(default_factory=list)  # answers that are neither 2xx nor a proper 503
    failed: list[str] = field(default_factory=list)  # no answer at all (the connection reset...)

    def add(self, resp: requests.Response) -> None:
        self.statuses[resp.status_code] += 1
        if 200 <= resp.status_code < 300:
            return
        proper_503 = (
            resp.status_code == 503
            and resp.headers.get("Retry-After", "").isdigit()
            and resp.headers.get("Content-Type", "").startswith("application/problem+json")
            and resp.json().get("code") == "service_unavailable"
        )
        if not proper_503:
            self.refused.append(f"{resp.status_code} {resp.request.method} {resp.url}: {resp.text[:300]}")

    @property
    def server_errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if status >= 500)


class Load:
    """``threads`` threads per call, each sending its call again and again on a session of its own,
    while ``running()``; ``tallies`` by the calls' names."""

    def __init__(self, calls: dict[str, Call], *, threads: int = 2):
        self._calls = calls
        self._threads = threads
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.tallies = {name: Tally() for name in calls}

    def _send(self, name: str, call: Call) -> None:
        with requests.Session() as session:
            while not self._stop.is_set():
                try:
                    resp = call(session)
                except requests.RequestException as exc:
                    with self._lock:
                        self.tallies[name].failed.append(repr(exc))
                    continue
                with self._lock:
                    self.tallies[name].add(resp)

    @contextmanager
    def running(self) -> Iterator[Load]:
        workers = [threading.Thread(target=self._send, args=(name, call), daemon=True)
                   for name, call in self._calls.items() for _ in range(self._threads)]
        for worker in workers:
            worker.start()
        try:
            yield self
        finally:
            self._stop.set()
            for worker in workers:
                worker.join(timeout=60)

    def snapshot(self) -> dict[str, Counter[int]]:
        with self._lock:
            return {name: Counter(tally.statuses) for name, tally in self.tallies.items()}


def during(before: dict[str, Counter[int]], after: dict[str, Counter[int]]) -> dict[str, Counter[int]]:
    """The answers between two snapshots."""
    return {name: after[name] - before[name] for name in after}


def rides_out_ended_connections(database_url: str, application_name: str, calls: dict[str, Call], *,
                                kills: int = 3, seconds: float = 3.0, after: int = 20) -> None:
    """``kills`` rounds of ``ended_connections`` for ``seconds`` each while ``Load`` sends ``calls``:
    every answer is 2xx or a proper 503 (none a 500, none missing) and every round did end connections;
    then ``after`` rounds of the calls on a fresh session are all 2xx (no stale pooled connection
    fails later). Prints the answers of each round (the figures, with ``pytest -s``)."""
    load = Load(calls)
    rounds = []
    with load.running():
        for _ in range(kills):
            before = load.snapshot()
            ended = ended_connections(database_url, application_name, seconds)
            rounds.append((len(ended), during(before, load.snapshot())))
    print(f"\n{kills} kills of {seconds} s, answers during each:")
    for ended_count, answers in rounds:
        print(f"  {ended_count} connections ended: " + ", ".join(f"{name} {dict(c)}" for name, c in answers.items()))
    for name, tally in load.tallies.items():
        print(f"  {name}: {dict(tally.statuses)}, no answer: {len(tally.failed)}")
        assert tally.refused == [], f"{name}: answers other than 2xx or 503 with Retry-After"
        assert tally.failed == [], f"{name}: requests without an answer"
        assert tally.statuses[500] == 0
    assert all(ended_count > 0 for ended_count, _ in rounds), f"the kills met no {application_name} connection"
    with requests.Session() as session:  # every ended connection is gone: all 2xx again
        for _ in range(after):
            for call in calls.values():
                resp = call(session)
                assert 200 <= resp.status_code < 300, resp.text


class PrivateLogin:
    """A superuser login role of the test's own (``url``: ``database_url`` as that role), for one
    process under test: ``refused()`` makes the database unreachable for it alone (its sessions ended,
    new ones refused: ``NOLOGIN``), while the test and the services around it go on as usual."""

    def __init__(self, database_url: str):
        self._admin_url = database_url
        self.role = f"dps_outage_{uuid.uuid4().hex[:12]}"
        self.url = make_url(database_url).set(username=self.role, password=None).render_as_string(hide_password=False)

    def _admin(self) -> psycopg.Connection:
        return psycopg.connect(_libpq(self._admin_url), autocommit=True, application_name=KILLER_NAME)

    def _end_sessions(self, admin: psycopg.Connection) -> None:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (self.role,))
        for _ in range(500):  # a backend leaves pg_stat_activity a moment after it was told to end
            if not admin.execute("SELECT 1 FROM pg_stat_activity WHERE usename = %s", (self.role,)).fetchone():
                return
            time.sleep(0.01)

    @contextmanager
    def refused(self) -> Iterator[None]:
        with self._admin() as admin:
            admin.execute(f'ALTER ROLE "{self.role}" NOLOGIN')
            self._end_sessions(admin)
            try:
                yield
            finally:
                admin.execute(f'ALTER ROLE "{self.role}" LOGIN')


@contextmanager
def private_login(database_url: str) -> Iterator[PrivateLogin]:
    login = PrivateLogin(database_url)
    with login._admin() as admin:
        admin.execute(f'CREATE ROLE "{login.role}" SUPERUSER LOGIN')
    try:
        yield login
    finally:
        with login._admin() as admin:
            admin.execute(f'ALTER ROLE "{login.role}" NOLOGIN')
            login._end_sessions(admin)
            admin.execute(f'REASSIGN OWNED BY "{login.role}" TO CURRENT_USER')  # e.g. partitions it made
            admin.execute(f'DROP ROLE "{login.role}"')


def _libpq(database_url: str) -> str:
    return make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
