"""The cost of one batch of the consumer's intake and of the outbox relay's SQL, alone (issue 29).

``bench/webhooks.py --steady`` sees the whole pipeline on a shared machine; this isolates what one
transaction of the two hot write paths costs, as CPU time (this process, and its PostgreSQL backend
from ``/proc/<pid>/schedstat``), which other load moves much less than wall time. Variants, run in
alternation on one pooled connection of a fresh dispatcher database:

- ``orm``: the way before 2be1aca, an ORM session per batch and the SQLAlchemy statements executed on
  it (``tx()``, ``session.connection().execute``);
- ``driver``: ``Transactions.write_cursor`` as the relay and intake run it: the same SQL compiled
  once (``driver_sql``) on a driver cursor, one explicit COMMIT, each statement its own round trip;
- ``pipelined``: the same in psycopg's pipeline mode (BEGIN with the first statement, the unread
  statements with the COMMIT: two round trips fewer). Measured: more CPU than ``driver`` at every
  batch size (psycopg's pipeline bookkeeping costs more than the round trips it saves), so not used.

The relay's part is its claim and mark (no broker: the publish costs the same in every variant).

    .venv/bin/python bench/webhooks_batches.py [--batches 300] [--rounds 3] [--sizes 1,5,32]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import psycopg  # noqa: E402
from databases import fresh_database  # noqa: E402
from report import load_average  # noqa: E402
from seed import DEFAULT_SERVER_URL  # noqa: E402
from sqlalchemy import MetaData  # noqa: E402

from dps_common import migrations  # noqa: E402
from dps_common.db import Transactions, make_engine  # noqa: E402
from dps_common.outbox.relay import batches as relay_sql  # noqa: E402
from dps_common.outbox.table import outbox_table  # noqa: E402

from dps_webhooks.db.deliveries import notify_due  # noqa: E402
from dps_webhooks.services import intake  # noqa: E402

VARIANTS = ("orm", "driver", "pipelined")


def incoming(organization_id: uuid.UUID) -> intake.IncomingEvent:
    body = (
        '{"id":"%s","type":"quote.approved","organizationId":"%s","occurredAt":"%s","data":{"quoteId":"%s","total":"100.00"}}'
        % (uuid.uuid4(), organization_id, datetime.now(UTC).isoformat(), uuid.uuid4())
    )
    return intake.IncomingEvent.from_envelope(body)


@contextmanager
def pipelined(tx: Transactions) -> Iterator[psycopg.Cursor[Any]]:
    """``write_cursor`` in pipeline mode."""
    pooled = tx._read_engine.raw_connection()  # type: ignore[union-attr]
    connection = pooled.driver_connection
    assert isinstance(connection, psycopg.Connection)
    try:
        with connection.cursor() as cursor, connection.pipeline():
            yield cursor
            connection.commit()
    finally:
        pooled.close()


def orm_accept(tx: Transactions, events: list[intake.IncomingEvent]) -> None:
    """``accept_events`` as it was before 2be1aca (its statements through the session)."""
    with tx() as session:
        fresh = intake._unique_in_id_order(events)
        by_id = {event.id: event for event in fresh}
        found = session.connection().execute(intake._STORE_EVENTS_WITH_SUBSCRIBERS, intake._event_arrays(fresh)).all()
        rows = [
            intake.delivery_row(by_id[endpoint.event_id], endpoint.id, now=intake._NO_OFFSET, held=False)
            for endpoint in found
        ]
        session.connection().execute(intake._INSERT_DELIVERIES, intake.as_arrays(rows, intake._DELIVERY_COLUMNS))
        notify_due(session)


def intake_step(tx: Transactions, variant: str, events: list[intake.IncomingEvent]) -> None:
    if variant == "orm":
        orm_accept(tx, events)
        return
    with pipelined(tx) if variant == "pipelined" else tx.write_cursor() as cursor:
        intake.accept_batch(cursor, events)


def relay_step(tx: Transactions, variant: str, size: int) -> int:
    if variant == "orm":
        with tx() as session:
            rows = session.connection().execute(relay_sql._CLAIM_UNPUBLISHED, {"limit": size}).all()
            if rows:
                session.connection().execute(relay_sql._MARK_PUBLISHED, {"ids": [row[0] for row in rows]})
            return len(rows)
    with pipelined(tx) if variant == "pipelined" else tx.write_cursor() as cursor:
        claimed = relay_sql.claim(cursor, size)
        relay_sql.mark_published(cursor, [event.id for event in claimed.events])
        return len(claimed.events)


def backend_ns(pid: int) -> int:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def measure(step: Callable[[], object], batches: int, backend: int) -> tuple[float, float]:
    """Microseconds of this process's and of the backend's CPU per batch."""
    cpu, server = time.process_time(), backend_ns(backend)
    for _ in range(batches):
        step()
    return (time.process_time() - cpu) / batches * 1e6, (backend_ns(backend) - server) / batches / 1e3


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batches", type=int, default=300)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--sizes", default="1,5,32")
    p.add_argument("--server-url", default=DEFAULT_SERVER_URL)
    args = p.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"load average before: {load_average()}")
    with fresh_database(args.server_url, "dps_bench_batches") as url:
        migrations.upgrade("dps_webhooks", url)
        outbox_table(MetaData()).create(make_engine(url, pool_size=1))
        organization_id = uuid.uuid4()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO webhook_endpoints (id, organization_id, url, status, secret_sealed)"
                " VALUES (gen_random_uuid(), %s, 'https://hooks.example.com/bench', 'ACTIVE', '\\x00')",
                (organization_id,),
            )
        engine = make_engine(url, pool_size=1, max_overflow=0, application_name="bench-batches")
        tx = Transactions.for_engine(engine)
        with engine.connect() as connection:  # the one pooled connection every variant uses
            backend = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        results: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
        with psycopg.connect(url, autocommit=True) as filler:
            for _ in range(args.rounds):
                for size in sizes:
                    for variant in VARIANTS:
                        events = [[incoming(organization_id) for _ in range(size)] for _ in range(args.batches)]
                        queue = iter(events)
                        results.setdefault(("intake", variant, size), []).append(
                            measure(lambda: intake_step(tx, variant, next(queue)), args.batches, backend)
                        )
                        filler.execute(
                            "INSERT INTO outbox_events (id, organization_id, event_type, occurred_at, envelope)"
                            " SELECT gen_random_uuid(), %s, 'quote.approved', now(), '{\"n\": 1}' FROM generate_series(1, %s)",
                            (organization_id, size * args.batches),
                        )
                        results.setdefault(("relay", variant, size), []).append(
                            measure(lambda: relay_step(tx, variant, size), args.batches, backend)
                        )
        engine.dispose()
    print(f"load average after: {load_average()}")
    print(f"{args.batches} batches per measurement, {args.rounds} rounds; median of rounds, µs per batch (per event)")
    print("| path | events per batch | variant | this process | its PostgreSQL backend | both |")
    print("|---|---:|---|---:|---:|---:|")
    for (path, variant, size), samples in results.items():
        mine = statistics.median(sample[0] for sample in samples)
        server = statistics.median(sample[1] for sample in samples)
        print(
            f"| {path} | {size} | {variant} | {mine:,.0f} ({mine / size:,.0f}) | {server:,.0f} ({server / size:,.0f})"
            f" | {mine + server:,.0f} ({(mine + server) / size:,.0f}) |"
        )


if __name__ == "__main__":
    main()
