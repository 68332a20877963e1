"""``make bench-history``: the delivery history's retention and inserts, unpartitioned vs by day (issue 19).

``make bench-history`` runs this script as it was before migration 0006, on the code of that commit
(a work tree under ``.run/``, ``HISTORY_BENCH_COMMIT`` in the Makefile): it drives revisions 0004 and
0005 with the dispatcher's own inserts, whose later versions write columns those revisions lack.

Two fresh databases on DATABASE_URL's server, side by side in one run: ``before`` migrated to the
revision before ``0005_history_partitioned_by_day`` (plain tables, today's batched retention) and
``after`` migrated to it (partitioned by day). Each gets the same history, loaded in SQL:

- one day 31 days old of ``--deliveries`` deliveries (10 endpoints of one organization, an event per
  10 deliveries), each final with its attempts: 90 % SUCCESS at the first attempt, 8 % SUCCESS at
  the second or third, 2 % EXHAUSTED after 8 (about 1.26 attempts a delivery), with realistic
  excerpts (a receiver's 20-200 byte answer, an error message on failures);
- a tenth of that today (the table is never only the day being purged).

Then, on both, alternating, ``--rounds`` rounds of the dispatcher's own inserts: ``accept_events``
(a batch of 100 events to 5 endpoints: 500 deliveries, stored claimed, one transaction) and
``record_outcomes`` (their 500 attempts and delivery updates, one transaction), as the consumer
and the worker do: deliveries + attempts inserted a second.

Last, the purge of the old day: ``before`` today's way (``DELETE`` of 1,000 deliveries at a time,
their attempts by cascade, a commit each, until none is left; then the ``VACUUM`` that makes the
space reusable), ``after`` the maintenance's way (``DETACH`` + ``DROP`` of the day's two partitions
in one transaction). Wall time and WAL written of each. Before that, migration 0005 is timed on a
copy of ``before`` (the time its copy of the history holds the tables' locks), and after it the
variant not chosen is purged the same way on a third database: the attempts' foreign key declared
between the partitioned parents, whose ``DETACH`` makes PostgreSQL check the attempts against the
day detached. The events' purge (batched in both) is not
part of it. Speed is measured here and never asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import psycopg
from databases import UUID7_AT_FUNCTION, fresh_database, server_version
from report import load_average
from seed import DEFAULT_SERVER_URL

from dps_common import migrations
from dps_common.db import Transactions, make_engine

from dps_webhooks.db import partitions
from dps_webhooks.domain.attempt_outcome import AttemptResult, DeliveryStatus, EndpointEffect, Outcome
from dps_webhooks.services.intake import IncomingEvent, accept_events
from dps_webhooks.services.recording import Finished, record_outcomes

PACKAGE = "dps_webhooks"
PARTITIONED = "0005_history_partitioned_by_day"
UNPARTITIONED = f"{PARTITIONED}-1"

_LOAD = [
    # endpoints of the loaded history
    """INSERT INTO webhook_endpoints (id, organization_id, url, status, secret_sealed)
       SELECT gen_random_uuid(), %(org)s, 'https://hooks.example.com/' || n, 'ACTIVE', '\\x00'
       FROM generate_series(1, 10) n""",
    # an event per 10 deliveries, spread over the day
    """INSERT INTO webhook_events (id, organization_id, event_type, occurred_at, body, body_bytes, received_at)
       SELECT bench_v7(t), %(org)s, 'quote.approved', t, repeat('x', 600), 600, t
       FROM (SELECT %(start)s::timestamptz + i * (interval '1 day' / %(events)s) AS t
             FROM generate_series(0, %(events)s - 1) i) s""",
    # one delivery per event and endpoint, final
    """INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status, attempt_count,
           last_response_status, last_response_excerpt, last_error_message, last_duration_ms, last_attempted_at,
           completed_at, created_at)
       SELECT bench_v7(e.received_at), e.organization_id, ep.id, e.id, e.event_type,
              CASE WHEN r < 0.98 THEN 'SUCCESS' ELSE 'EXHAUSTED' END,
              CASE WHEN r < 0.90 THEN 1 WHEN r < 0.94 THEN 2 WHEN r < 0.98 THEN 3 ELSE 8 END,
              CASE WHEN r < 0.98 THEN 200 ELSE 503 END,
              CASE WHEN r < 0.98 THEN '{"received":true,"id":"' || md5(random()::text) || '"}'
                   ELSE repeat('Service Unavailable ', 8) END,
              CASE WHEN r < 0.98 THEN NULL ELSE 'The receiver answered 503 Service Unavailable.' END,
              (random() * 300)::int, e.received_at + interval '2 hours', e.received_at + interval '2 hours',
              e.received_at
       FROM webhook_events e CROSS JOIN webhook_endpoints ep CROSS JOIN LATERAL (SELECT random() + 0 * e.body_bytes + 0 * length(ep.url) AS r) x
       WHERE e.received_at >= %(start)s AND e.received_at < %(start)s::timestamptz + interval '1 day'
         AND ep.organization_id = %(org)s""",
    # their attempts: the failed ones answered 503, the last one as the delivery says
    """INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, response_status,
           response_excerpt, error_message, duration_ms)
       SELECT bench_v7(d.created_at), d.id, n, d.created_at + n * interval '1 minute',
              CASE WHEN n = d.attempt_count THEN d.last_response_status ELSE 503 END,
              CASE WHEN n = d.attempt_count THEN d.last_response_excerpt ELSE repeat('Service Unavailable ', 8) END,
              CASE WHEN n = d.attempt_count THEN d.last_error_message
                   ELSE 'The receiver answered 503 Service Unavailable.' END,
              (random() * 300)::int
       FROM webhook_deliveries d CROSS JOIN LATERAL generate_series(1, d.attempt_count) n
       WHERE d.created_at >= %(start)s AND d.created_at < %(start)s::timestamptz + interval '1 day'""",
]

_OLD_WAY = (
    "DELETE FROM webhook_deliveries WHERE webhook_deliveries.id IN (SELECT webhook_deliveries.id FROM webhook_deliveries"
    " WHERE webhook_deliveries.created_at < now() - interval '30 days' LIMIT 1000 FOR UPDATE SKIP LOCKED)"
)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--deliveries", type=int, default=1_000_000, help="deliveries of the day purged")
    p.add_argument("--rounds", type=int, default=30, help="insert rounds of 100 events x 5 endpoints, per database")
    p.add_argument("--no-parent-fk", dest="parent_fk", action="store_false", help="skip the variant not chosen")
    p.add_argument("--no-migration", dest="migration", action="store_false", help="skip timing migration 0005")
    return p.parse_args()


def log(message: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def load(url: str, deliveries: int) -> dict[str, int]:
    """The old day and a tenth of it today; the rows of each table."""
    now = datetime.now(UTC)
    old_day = (now - timedelta(days=31)).date()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(UUID7_AT_FUNCTION)
        if conn.execute("SELECT to_regnamespace(%s)", (partitions.SCHEMA,)).fetchone()[0] is not None:
            engine = make_engine(url, pool_size=1, application_name="bench-history")
            with engine.begin() as connection:  # the migration made today's week; the old day is made here
                partitions.ensure_days(connection, [old_day])
            engine.dispose()
        org = uuid.uuid4()
        start_old = datetime(old_day.year, old_day.month, old_day.day, tzinfo=UTC)
        today = now.date()
        start_today = datetime(today.year, today.month, today.day, tzinfo=UTC)
        for start, count in ((start_old, deliveries), (start_today, deliveries // 10)):
            params = {"org": org, "start": start, "events": max(1, count // 10)}
            for statement in _LOAD[1:] if start is start_today else _LOAD:
                conn.execute(statement, params)
        conn.execute("ANALYZE")
        conn.execute("CHECKPOINT")
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("webhook_events", "webhook_deliveries", "webhook_delivery_attempts")
        }


def event(organization_id: uuid.UUID) -> IncomingEvent:
    body = (
        '{"id":"%s","type":"quote.approved","organizationId":"%s","occurredAt":"%s","data":{"quoteId":"%s","total":"100.00"}}'
        % (uuid.uuid4(), organization_id, datetime.now(UTC).isoformat(), uuid.uuid4())
    )
    return IncomingEvent.from_envelope(body)


class Inserter:
    """The dispatcher's inserts on one database: an organization with 5 endpoints."""

    def __init__(self, url: str):
        self.tx = Transactions.for_engine(make_engine(url, pool_size=2, application_name="bench-history"))
        self.org = uuid.uuid4()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO webhook_endpoints (id, organization_id, url, status, secret_sealed)"
                " SELECT gen_random_uuid(), %s, 'https://hooks.example.com/bench/' || n, 'ACTIVE', '\\x00'"
                " FROM generate_series(1, 5) n",
                (self.org,),
            )
        self.seconds: list[float] = []
        self.rows = 0

    def round(self) -> None:
        events = [event(self.org) for _ in range(100)]
        started = time.perf_counter()
        with self.tx() as session:
            accepted = accept_events(session, events, take_up_to=lambda n: n, lease_seconds=60)
        ok = AttemptResult(200, '{"received":true}', None, 12)
        success = Outcome(DeliveryStatus.SUCCESS, None, EndpointEffect.RESET_FAILURES)
        with self.tx() as session:
            recorded = record_outcomes(session, [Finished(c, ok, success) for c in accepted.claimed], disable_after=20)
        self.seconds.append(time.perf_counter() - started)
        assert accepted.deliveries == 500 and len(recorded) == 500, (accepted.deliveries, len(recorded))
        self.rows += accepted.deliveries + len(recorded)

    def rate(self) -> float:
        return self.rows / sum(self.seconds)

    def close(self) -> None:
        self.tx.dispose()


def wal(conn: psycopg.Connection) -> str:
    return conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0]


def wal_bytes(conn: psycopg.Connection, since: str) -> int:
    return int(conn.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s::pg_lsn)", (since,)).fetchone()[0])


def time_migration(server_url: str, before: str) -> float:
    """Migration 0005 on a copy of ``before`` (its whole history): seconds."""
    source = before.rsplit("/", 1)[1]
    copy = f"{source}_copy"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{copy}" TEMPLATE "{source}"')
    try:
        started = time.perf_counter()
        migrations.upgrade(PACKAGE, before.rsplit("/", 1)[0] + "/" + copy, PARTITIONED)
        return time.perf_counter() - started
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{copy}" WITH (FORCE)')


def purge_old_way(url: str) -> dict[str, float]:
    with psycopg.connect(url, autocommit=True) as conn:
        size = conn.execute(
            "SELECT pg_total_relation_size('webhook_deliveries') + pg_total_relation_size('webhook_delivery_attempts')"
        ).fetchone()[0]
        lsn = wal(conn)
        started = time.perf_counter()
        deleted = batches = 0
        while True:
            count = conn.execute(_OLD_WAY).rowcount
            deleted += count
            batches += 1
            if count < 1000:
                break
        delete_seconds = time.perf_counter() - started
        delete_wal = wal_bytes(conn, lsn)
        lsn = wal(conn)
        started = time.perf_counter()
        conn.execute("VACUUM webhook_deliveries, webhook_delivery_attempts")
        vacuum_seconds = time.perf_counter() - started
        vacuum_wal = wal_bytes(conn, lsn)
        size_after = conn.execute(
            "SELECT pg_total_relation_size('webhook_deliveries') + pg_total_relation_size('webhook_delivery_attempts')"
        ).fetchone()[0]
    return {
        "deleted": deleted,
        "batches": batches,
        "delete_s": delete_seconds,
        "delete_wal_mb": delete_wal / 1e6,
        "vacuum_s": vacuum_seconds,
        "vacuum_wal_mb": vacuum_wal / 1e6,
        "size_mb": size / 1e6,
        "size_after_mb": size_after / 1e6,
    }


def purge_by_partition(url: str) -> dict[str, float]:
    old_day = (datetime.now(UTC) - timedelta(days=31)).date()
    engine = make_engine(url, pool_size=1, application_name="bench-history")
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            deleted = conn.execute(
                f"SELECT count(*) FROM {partitions.partition('webhook_deliveries', old_day)}"
            ).fetchone()[0]
            size = conn.execute(
                "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = %s AND c.relkind = 'r'",
                (partitions.SCHEMA,),
            ).fetchone()[0]
            lsn = wal(conn)
            started = time.perf_counter()
            with engine.begin() as connection:  # as the maintenance does it
                connection.exec_driver_sql("SET LOCAL lock_timeout = '2s'")
                partitions.drop_day(connection, old_day)
            seconds = time.perf_counter() - started
            written = wal_bytes(conn, lsn)
            size_after = conn.execute(
                "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = %s AND c.relkind = 'r'",
                (partitions.SCHEMA,),
            ).fetchone()[0]
    finally:
        engine.dispose()
    return {"deleted": deleted, "drop_s": seconds, "drop_wal_mb": written / 1e6, "size_mb": size / 1e6,
            "size_after_mb": size_after / 1e6}  # fmt: skip


def parent_foreign_key(url: str) -> None:
    """The variant not chosen: the attempts' foreign key between the partitioned parents."""
    with psycopg.connect(url, autocommit=True) as conn:
        names = conn.execute(
            "SELECT conrelid::regclass::text, conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace"
            " WHERE n.nspname = %s AND contype = 'f' AND conname LIKE 'fk_%%delivery_id'",
            (partitions.SCHEMA,),
        ).fetchall()
        for table, name in names:
            conn.execute(f"ALTER TABLE {table} DROP CONSTRAINT {name}")
        conn.execute(
            "ALTER TABLE webhook_delivery_attempts ADD CONSTRAINT fk_parents FOREIGN KEY (delivery_id)"
            " REFERENCES webhook_deliveries (id) ON DELETE CASCADE"
        )


def main() -> None:
    args = parse_args()
    server_url = os.environ.get("DATABASE_URL", DEFAULT_SERVER_URL)
    print(f"# bench/history.py, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, PostgreSQL {server_version(server_url)}, "
          f"{os.cpu_count()} cores, load average {load_average()} at start")  # fmt: skip
    with ExitStack() as stack:
        before = stack.enter_context(fresh_database(server_url, "dps_bench_before"))
        after = stack.enter_context(fresh_database(server_url, "dps_bench_after"))
        parent_fk = stack.enter_context(fresh_database(server_url, "dps_bench_parent_fk")) if args.parent_fk else None
        migrations.upgrade(PACKAGE, before, UNPARTITIONED)
        migrations.upgrade(PACKAGE, after, PARTITIONED)
        for name, url in (("before", before), ("after", after), ("parent_fk", parent_fk)):
            if url is None:
                continue
            started = time.perf_counter()
            if url is parent_fk:
                migrations.upgrade(PACKAGE, url, PARTITIONED)
            rows = load(url, args.deliveries)
            if url is parent_fk:
                parent_foreign_key(url)
            log(f"{name}: loaded {rows} in {time.perf_counter() - started:.0f} s")
        inserters = {"before": Inserter(before), "after": Inserter(after)}
        for name in inserters:  # warm-up: connections, statement caches
            inserters[name].round()
            inserters[name].seconds.clear()
            inserters[name].rows = 0
        for _ in range(args.rounds):
            for inserter in inserters.values():
                inserter.round()
        for name, inserter in inserters.items():
            median_ms = statistics.median(inserter.seconds) * 1000
            print(f"insert {name}: {inserter.rate():,.0f} deliveries+attempts/s "
                  f"({inserter.rows:,} rows, {len(inserter.seconds)} rounds of 500+500, median round {median_ms:.1f} ms)")  # fmt: skip
            inserter.close()
        if args.migration:
            log("migrating a copy of before")
            print(f"migration 0005 on a copy of before (its whole history): {time_migration(server_url, before):.1f} s")
        log("purging")
        old = purge_old_way(before)
        print(f"purge before (batched DELETE + VACUUM): {old['deleted']:,} deliveries in {old['batches']:,} batches: "
              f"DELETE {old['delete_s']:.1f} s ({old['delete_wal_mb']:,.0f} MB WAL), VACUUM {old['vacuum_s']:.1f} s "
              f"({old['vacuum_wal_mb']:,.0f} MB WAL); tables {old['size_mb']:,.0f} MB before, {old['size_after_mb']:,.0f} MB after")  # fmt: skip
        new = purge_by_partition(after)
        print(f"purge after (DETACH + DROP of the day's partitions): {new['deleted']:,} deliveries in "
              f"{new['drop_s'] * 1000:.0f} ms ({new['drop_wal_mb']:.2f} MB WAL); partitions {new['size_mb']:,.0f} MB before, "
              f"{new['size_after_mb']:,.0f} MB after")  # fmt: skip
        if parent_fk is not None:
            variant = purge_by_partition(parent_fk)
            print(f"purge, the variant not chosen (foreign key between the parents: DETACH checks the attempts): "
                  f"{variant['deleted']:,} deliveries in {variant['drop_s'] * 1000:,.0f} ms")  # fmt: skip
        print(f"load average at end {load_average()}")


if __name__ == "__main__":
    main()
