"""The dispatcher's consumer side with 1, 2 and 4 shards (issue 19): how fast N single-active
consumers, one per shard, each its own process, turn a queued backlog of events into stored events
and deliveries.

    .venv/bin/python bench/webhooks_shards.py                 # 1, 2, 4 shards; 20,000 events
    .venv/bin/python bench/webhooks_shards.py --events 5000 --shards 1 2

For each shard count: a fresh dispatcher database (migrated) with 1,000 organizations of one PAUSED
endpoint each (so every event makes one held delivery, as the intake does for a paused endpoint, and
no attempt is made: the consumer side alone), a fresh vhost with the shard queues declared, the
events published first (routing keys as the relays make them, ``dps_common.messaging.shards``), then
one consumer process per shard (``EventConsumer`` on its shard's queue, no delivery worker), let go
together once all have imported and connected. Rate = events stored / (last stored - consumers started); CPU per event of the consumers,
the bench database's PostgreSQL backends and RabbitMQ (the whole server). Every event must be
stored once. On this 2-core machine the consumers share the cores with PostgreSQL and RabbitMQ, so
the figure is what sharding buys on one small machine, not the scaling on many.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from databases import fresh_database
from report import RESULTS_DIR, load_average
from run import git_revision
from seed import DEFAULT_SERVER_URL
from webhooks_load import quote_snapshot
from webhooks_stack import cpu_by_pid, cpu_delta, pids_named

from dps_common.events.envelope import envelope
from dps_common.json import dumps
from dps_common.messaging import EventPublisher, OutgoingEvent, connect
from dps_common.messaging.shards import routing_key
from dps_testing.services import fresh_vhost

from dps_webhooks.adapters.events_queue import events_queue
from dps_webhooks.db.migrate import upgrade
from dps_webhooks.settings import Settings

EXCHANGE = "dps.bench.shards"
QUEUE = "dps-bench.events"
CONSUMER = """
import os, sys, threading, signal, time
from dps_common.db import Transactions, make_engine
from dps_webhooks.workers.consumers import EventConsumer
from dps_webhooks.settings import Settings
url, amqp, shards, shard, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
settings = Settings(database_url=url, cursor_secret=b"x" * 32, secret_key=bytes(32), api_url="https://127.0.0.1:9",
                    internal_api_token="t" * 32, amqp_url=amqp, events_exchange=%r, events_queue=%r,
                    events_shards=shards)
stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
engine = make_engine(url, pool_size=2, application_name="dps-bench-shard-consumer")
while not os.path.exists(go):  # imported and ready: start-up costs no CPU in the measurement
    time.sleep(0.01)
EventConsumer(settings, Transactions.for_engine(engine), shard=shard if shards > 1 else None).run(stop)
""" % (EXCHANGE, QUEUE)


def _code_tree() -> Path:
    import dps_common

    return Path(dps_common.__file__).resolve().parents[4]


def settings_for(url: str, amqp_url: str, shards: int) -> Settings:
    return Settings(database_url=url, cursor_secret=b"x" * 32, secret_key=bytes(32), api_url="https://127.0.0.1:9",
                    internal_api_token="t" * 32, amqp_url=amqp_url, events_exchange=EXCHANGE, events_queue=QUEUE,
                    events_shards=shards)


def organizations(url: str, count: int) -> list[uuid.UUID]:
    ids = [uuid.uuid4() for _ in range(count)]
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO webhook_endpoints (id, organization_id, url, description, status, secret_sealed)"
            " SELECT gen_random_uuid(), o, 'https://example.com/hook', 'bench', 'PAUSED', '\\x00'::bytea"
            " FROM unnest(%s::uuid[]) AS o",
            (ids,),
        )
    return ids


def settle(pids: list[int], timeout: float = 60) -> None:
    """Until the processes have imported and connected: half a second with almost no CPU."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = sum(cpu_by_pid(pids).values())
        time.sleep(0.5)
        if sum(cpu_by_pid(pids).values()) - before < 0.02:
            return
    raise RuntimeError("the consumers are still starting")


def stored(url: str) -> int:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM webhook_events").fetchone()[0]


def one(server_url: str, shards: int, events: int, orgs: int) -> dict[str, float]:
    with ExitStack() as stack:
        url = stack.enter_context(fresh_database(server_url, "dps_bench_shards"))
        upgrade(url)
        amqp_url = stack.enter_context(fresh_vhost("dps_bench_shards"))
        settings = settings_for(url, amqp_url, shards)
        queues = [events_queue(settings, shard if shards > 1 else None) for shard in range(shards)]
        with connect(amqp_url) as connection:
            for queue in queues:
                queue(connection.default_channel).declare()
        org_ids = organizations(url, orgs)
        publisher = EventPublisher(amqp_url, EXCHANGE)
        stack.callback(publisher.close)
        for start in range(0, events, 500):
            batch = []
            for n in range(start, min(events, start + 500)):
                org = org_ids[n % orgs]
                body = envelope("quote.updated", org, quote_snapshot(org), occurred_at=datetime.now(UTC))
                batch.append(OutgoingEvent(body["id"], body["type"], dumps(body), None,
                                           routing_key("quote.updated", org, shards)))
            failure = publisher.publish_batch(batch).failure
            if failure is not None:
                raise failure
        with psycopg.connect(server_url, autocommit=True) as admin:
            def backends() -> list[int]:
                return [pid for (pid,) in admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = %s", (url.rsplit("/", 1)[1],)).fetchall()]

            env = {**os.environ, "LOG_LEVEL": "WARNING"}
            go = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="dps-bench-shards-"))) / "go"
            processes = [subprocess.Popen([sys.executable, "-c", CONSUMER, url, amqp_url, str(shards), str(shard), str(go)],
                                          env=env)
                         for shard in range(shards)]

            def stop_all() -> None:
                for process in processes:
                    process.terminate()
                for process in processes:
                    process.wait(timeout=30)

            stack.callback(stop_all)
            cpu = lambda: {"consumers": cpu_by_pid([p.pid for p in processes]), "postgres": cpu_by_pid(backends()),  # noqa: E731
                           "rabbitmq": cpu_by_pid(pids_named("beam.smp"))}
            settle([p.pid for p in processes])
            before = cpu()
            started = time.monotonic()
            go.touch()
            deadline = started + 600
            while (done := stored(url)) < events:
                if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                    raise RuntimeError(f"{shards} shards: {done} of {events} stored")
                time.sleep(0.05)
            elapsed = time.monotonic() - started
            used = cpu_delta(before, cpu())
            with psycopg.connect(url) as conn:
                deliveries = conn.execute("SELECT count(*) FROM webhook_deliveries").fetchone()[0]
            if deliveries != events:
                raise RuntimeError(f"{deliveries} deliveries for {events} events")
        return {"rate": events / elapsed, **{k: v * 1e6 / events for k, v in used.items()}}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=20_000)
    p.add_argument("--organizations", type=int, default=1000)
    p.add_argument("--shards", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args()
    server_url = os.environ.get("DATABASE_URL", DEFAULT_SERVER_URL)
    load_before = load_average()
    rows = []
    for shards in args.shards:
        result = one(server_url, shards, args.events, args.organizations)
        rows.append((shards, result))
        print(f"{shards} shard(s): {result['rate']:,.0f} events/s; CPU µs/event: consumers {result['consumers']:,.0f}, "
              f"postgres {result['postgres']:,.0f}, rabbitmq {result['rabbitmq']:,.0f}", flush=True)
    base = rows[0][1]["rate"]
    lines = [
        f"# Consumer side by shards, {datetime.now().astimezone().isoformat(timespec='seconds')}", "",
        f"- command: {' '.join(['.venv/bin/python', 'bench/webhooks_shards.py', *sys.argv[1:]])}",
        f"- code: {git_revision(_code_tree())} (the tree the services were imported from: {_code_tree()})",
        f"- {args.events:,} events of {args.organizations:,} organizations queued first, one held delivery each; "
        "one consumer process per shard", f"- load average (1 min) before / after: {load_before} / {load_average()}", "",
        "| shards = consumers | events/s | × 1 shard | CPU µs/event: consumers | PostgreSQL | RabbitMQ |",
        "|---:|---:|---:|---:|---:|---:|",
        *(f"| {s} | {r['rate']:,.0f} | {r['rate'] / base:.2f} | {r['consumers']:,.0f} | {r['postgres']:,.0f} | "
          f"{r['rabbitmq']:,.0f} |" for s, r in rows),
    ]
    text = "\n".join(lines) + "\n"
    print("\n" + text)
    if not args.no_write:
        path = RESULTS_DIR / f"{datetime.now().astimezone().date().isoformat()}-webhooks-shards.md"
        path.write_text(text)
        print(f"written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
