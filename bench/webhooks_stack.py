"""The webhook bench's system: two fresh databases, a fresh RabbitMQ vhost, a throwaway CA, the
HTTPS receiver, the api's outbox relay and the dispatcher's worker processes, one endpoint.

Everything is entered on one ``ExitStack``: processes run in their own process groups and are
stopped (SIGTERM, then SIGKILL), the databases dropped and the vhost deleted, whatever happens.
"""

from __future__ import annotations

import os
import resource
import secrets
import signal
import subprocess
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

import psycopg
import requests
from databases import fresh_database
from servers import CLOCK_TICKS, free_port

from dps_common.crypto import new_key
from dps_common.db import Transactions, make_engine
from dps_common.ids import new_id
from dps_testing.processes import write_tls_files
from dps_testing.services import fresh_vhost

from dps_api.db.migrate import upgrade as upgrade_api
from dps_api.services.identity import IdentityService
from dps_webhooks.adapters.signing_secrets import SecretSealer, new_signing_secret
from dps_webhooks.db.deliveries import DELIVERIES_CHANNEL
from dps_webhooks.db.migrate import upgrade as upgrade_dispatcher

BENCH_DIR = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"


class Process:
    """A child in its own process group, logging to a file; ``stop`` ends the whole group."""

    def __init__(self, name: str, command: list[str], env: dict[str, str], log_dir: Path, cwd: Path | None = None):
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            command, env={**os.environ, **env}, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True, cwd=cwd,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            tail = self.log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}; log tail:\n{tail}")

    def pids(self) -> list[int]:
        """The process and all its descendants (gunicorn workers, threads excluded)."""
        out, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            try:
                for task in Path(f"/proc/{pid}/task").iterdir():
                    todo += [int(p) for p in (task / "children").read_text().split()]
            except OSError:
                pass
        return out

    def settle(self, window: float = 0.5, quiet_cpu: float = 0.02, timeout: float = 30) -> None:
        """Wait until the process is done starting up: a ``window`` in which it used less than
        ``quiet_cpu`` seconds of CPU (imports and connecting cost about a second of it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            before = cpu_seconds(self.pids())
            time.sleep(window)
            if cpu_seconds(self.pids()) - before < quiet_cpu:
                return
        raise RuntimeError(f"{self.name} still busy {timeout:.0f} s after it started")

    def stop(self, timeout: float = 15) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.pid, signal.SIGKILL)
                self.process.wait(timeout=timeout)
            except ProcessLookupError:
                pass
        self._log.close()


def cpu_by_pid(pids: list[int]) -> dict[int, float]:
    """CPU seconds used so far by each of these processes: the sum over its threads of the
    scheduler's run time (``/proc/<pid>/task/<tid>/schedstat``, nanoseconds). ``/proc/<pid>/stat``
    counts in clock ticks (10 ms): a 5 s idle window could not tell 1 ms of CPU per second from 3.
    A thread that ends during a window takes its time with it (the pipeline's threads live as long
    as their process); this process (the producer's threads come and go) is read from ``getrusage``,
    and a process without schedstat from ``stat``."""
    seconds = {}
    for pid in pids:
        if pid == os.getpid():
            usage = resource.getrusage(resource.RUSAGE_SELF)
            seconds[pid] = usage.ru_utime + usage.ru_stime
            continue
        try:
            total = 0
            for task in Path(f"/proc/{pid}/task").iterdir():
                try:
                    total += int((task / "schedstat").read_text().split()[0])
                except (OSError, IndexError, ValueError):
                    pass  # the thread ended meanwhile
            if total:
                seconds[pid] = total / 1e9
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return seconds


def cpu_seconds(pids: list[int]) -> float:
    return sum(cpu_by_pid(pids).values())


def cpu_delta(before: dict[str, dict[int, float]], after: dict[str, dict[int, float]]) -> dict[str, float]:
    """CPU seconds per component between two ``Stack.cpu()`` snapshots. Per process, so that a
    PostgreSQL backend that exits meanwhile does not subtract (its own share is lost instead)."""
    return {k: sum(v - before[k].get(pid, 0.0) for pid, v in after[k].items()) for k in after}


def pids_named(*names: str) -> list[int]:
    """Every process whose command name is one of ``names`` (PostgreSQL backends, RabbitMQ's VM)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in names:
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@dataclass
class Stack:
    api_url: str  # the api's database
    dispatcher_url: str  # the dispatcher's database
    amqp_url: str
    tls: dict[str, str]
    work_dir: Path
    organization_id: UUID
    endpoint_id: UUID
    receiver_origin: str
    receiver: Process
    relay: Process | None = None
    workers: list[Process] = field(default_factory=list)
    common_env: dict[str, str] = field(default_factory=dict)
    worker_env: dict[str, str] = field(default_factory=dict)

    @property
    def arrivals_dir(self) -> Path:
        return self.work_dir / "arrivals"

    def start_relay(self, stack: ExitStack) -> None:
        env = {**self.common_env, "DATABASE_URL": self.api_url}
        self.relay = Process("relay", [str(BIN / "dealpricing-outbox-relay")], env, self.work_dir)
        stack.callback(self.relay.stop)

    def start_workers(self, stack: ExitStack, count: int) -> None:
        """Start ``count`` worker processes and wait until each has started up (idle again), so that
        no start-up CPU lands in a measurement."""
        started = []
        for _ in range(count):
            worker = Process(f"worker-{len(self.workers) + 1}", [str(BIN / "dealpricing-webhooks"), "worker"],
                             self.worker_env, self.work_dir)
            stack.callback(worker.stop)
            self.workers.append(worker)
            started.append(worker)
        for worker in started:
            worker.settle()

    def stop_last_worker(self) -> None:
        self.workers.pop().stop()

    def stop_workers(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.workers = []

    def check_alive(self) -> None:
        for process in [self.receiver, self.relay, *self.workers]:
            if process is not None:
                process.check_alive()

    def settle(self, window: float = 0.5, quiet_cpu: float = 0.05, timeout: float = 60) -> None:
        """Wait until the whole stack is quiet (a ``window`` in which all of it used less than
        ``quiet_cpu`` seconds of CPU), so that no measurement starts while the previous one's tail
        (recording, PostgreSQL's autovacuum after thousands of writes, checkpoints) still runs:
        without this the second of two back-to-back bursts came out about 6 % slower."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            before = self._busy()
            time.sleep(window)
            if self._busy() - before < quiet_cpu:
                return
        raise RuntimeError(f"the stack was still busy {timeout:.0f} s after a measurement")

    def _busy(self) -> float:
        return sum(sum(by_pid.values()) for name, by_pid in self.cpu().items() if name != "bench")

    def cpu(self) -> dict[str, dict[int, float]]:
        """CPU seconds so far per component and process (PostgreSQL and RabbitMQ: the whole server)."""
        return {
            "relay": cpu_by_pid(self.relay.pids()) if self.relay else {},
            "workers": cpu_by_pid([pid for w in self.workers for pid in w.pids()]),
            "receiver": cpu_by_pid(self.receiver.pids()),
            "bench": cpu_by_pid([os.getpid()]),
            "postgres": cpu_by_pid(pids_named("postgres")),
            "rabbitmq": cpu_by_pid(pids_named("beam.smp")),
        }


def build(stack: ExitStack, server_url: str, receiver_workers: int, receiver_threads: int,
          concurrency: int | None) -> Stack:
    work_dir = Path(stack.enter_context(_temporary_dir()))
    (work_dir / "arrivals").mkdir()
    api_url = stack.enter_context(fresh_database(server_url))
    dispatcher_url = stack.enter_context(fresh_database(server_url))
    amqp_url = stack.enter_context(fresh_vhost("dps_bench_wh"))
    upgrade_api(api_url)
    upgrade_dispatcher(dispatcher_url)
    tls = write_tls_files(work_dir)
    organization_id = _organization(api_url)
    receiver, origin = _receiver(stack, work_dir, tls, receiver_workers, receiver_threads)
    secret_key = new_key()
    endpoint_id = _endpoint(dispatcher_url, organization_id, origin + "/hooks", secret_key)
    common = {
        "AMQP_URL": amqp_url,
        "API_KEY_PEPPER": secrets.token_hex(32),
        "CURSOR_SECRET": secrets.token_hex(32),
        "INTERNAL_API_TOKEN": secrets.token_hex(32),
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    worker_env = {
        **common,
        "DATABASE_URL": dispatcher_url,
        "WEBHOOK_SECRET_KEY": secret_key,
        "API_URL": "http://127.0.0.1:9",  # key introspection: the worker serves no HTTP
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
        "WEBHOOK_RECEIVER_CA_FILE": tls["ca"],
    }
    if concurrency:
        worker_env["WEBHOOK_DELIVERY_CONCURRENCY"] = str(concurrency)
    return Stack(api_url, dispatcher_url, amqp_url, tls, work_dir, organization_id, endpoint_id, origin, receiver,
                 common_env=common, worker_env=worker_env)


def _temporary_dir():
    import tempfile

    return tempfile.TemporaryDirectory(prefix="dps-bench-wh-")


def _organization(api_url: str) -> UUID:
    engine = make_engine(api_url, pool_size=1, application_name="dps-bench-webhooks")
    try:
        identity = IdentityService(Transactions.for_engine(engine), secrets.token_bytes(32),
                                   lambda: datetime.now(UTC), lambda _: None)
        return identity.create_organization("Webhook Bench Corp").id
    finally:
        engine.dispose()


def _endpoint(dispatcher_url: str, organization_id: UUID, url: str, secret_key: str) -> UUID:
    """One ACTIVE endpoint subscribed to every type, its secret sealed as the service seals it."""
    from dps_common.crypto import decode_key

    endpoint_id = new_id()
    sealed = SecretSealer(decode_key(secret_key)).seal(endpoint_id, new_signing_secret())
    with psycopg.connect(dispatcher_url) as conn:
        conn.execute(
            "INSERT INTO webhook_endpoints (id, organization_id, url, description, status, secret_sealed)"
            " VALUES (%s, %s, %s, 'bench receiver', 'ACTIVE', %s)",
            (endpoint_id, organization_id, url, sealed),
        )
    return endpoint_id


def _receiver(stack: ExitStack, work_dir: Path, tls: dict[str, str], workers: int, threads: int) -> tuple[Process, str]:
    port = free_port()
    command = [
        sys.executable, "-m", "gunicorn", "webhooks_receiver:app",
        "--worker-class", "gthread", "--workers", str(workers), "--threads", str(threads),
        "--keep-alive", "75", "--backlog", "2048", "--no-control-socket",
        "--bind", f"{HOST}:{port}", "--certfile", tls["cert"], "--keyfile", tls["key"],
    ]
    receiver = Process("receiver", command, {"BENCH_ARRIVALS_DIR": str(work_dir / "arrivals")}, work_dir, BENCH_DIR)
    stack.callback(receiver.stop)
    origin = f"https://{HOST}:{port}"
    deadline = time.monotonic() + 30
    with requests.Session() as probe:
        probe.trust_env = False
        while True:
            receiver.check_alive()
            try:
                if probe.get(origin + "/", verify=tls["ca"], timeout=2).status_code == 200:
                    return receiver, origin
            except requests.RequestException:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.2)


def insert_deliveries(dispatcher_url: str, organization_id: UUID, endpoint_id: UUID, count: int, body: str, *,
                      waiting_for_retry: bool) -> tuple[list[str], float]:
    """``count`` stored events, each with one delivery to the bench's real endpoint, in one
    transaction; the event ids and the commit time.

    ``waiting_for_retry``: FAILED after one attempt, next attempt an hour (plus up to 5 minutes)
    ahead, the retry queue a receiver outage leaves behind. Otherwise PENDING and due now, with the
    intake's NOTIFY: the delivery engine's work without the relay and the broker in front of it."""
    with psycopg.connect(dispatcher_url) as conn:
        rows = conn.execute(
            """
            WITH events AS (
                INSERT INTO webhook_events (id, organization_id, event_type, occurred_at, body, body_bytes)
                SELECT gen_random_uuid(), %(org)s, 'quote.updated', now(), %(body)s, %(size)s
                FROM generate_series(1, %(count)s)
                RETURNING id
            )
            INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status,
                attempt_count, next_attempt_at, last_response_status, last_duration_ms, last_attempted_at)
            SELECT gen_random_uuid(), %(org)s, %(endpoint)s, id, 'quote.updated',
                CASE WHEN %(retry)s THEN 'FAILED' ELSE 'PENDING' END,
                CASE WHEN %(retry)s THEN 1 ELSE 0 END,
                CASE WHEN %(retry)s THEN now() + interval '1 hour' + random() * interval '5 minutes' ELSE now() END,
                CASE WHEN %(retry)s THEN 503 END,
                CASE WHEN %(retry)s THEN 12 END,
                CASE WHEN %(retry)s THEN now() END
            FROM events
            RETURNING event_id
            """,
            {"org": organization_id, "endpoint": endpoint_id, "body": body, "size": len(body.encode()),
             "count": count, "retry": waiting_for_retry},
        ).fetchall()
        if not waiting_for_retry:
            conn.execute("SELECT pg_notify(%s, '')", (DELIVERIES_CHANNEL,))  # as the intake does
        conn.commit()
        committed = time.time()
        if waiting_for_retry:  # fresh statistics, as autovacuum would have by the time it matters
            conn.autocommit = True
            conn.execute("ANALYZE webhook_deliveries")
            conn.execute("ANALYZE webhook_events")
    return [str(row[0]) for row in rows], committed


def count_waiting_for_retry(dispatcher_url: str) -> int:
    with psycopg.connect(dispatcher_url) as conn:
        return conn.execute(
            "SELECT count(*) FROM webhook_deliveries WHERE status = 'FAILED' AND next_attempt_at > now()"
        ).fetchone()[0]
