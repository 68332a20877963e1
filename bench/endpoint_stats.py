"""``GET /webhook-configs/{id}/stats`` on a big history, before and after issue 27's hourly counts
(migration ``0008_endpoint_hours``), and what keeping them costs the recording.

A fresh dispatcher database on DATABASE_URL's server (dropped at the end), migrated to 0007 (before),
loaded in SQL with ``--endpoints`` endpoints (2) x ``--deliveries`` deliveries (100,000) each spread
evenly over the last ``--days`` days (8), every delivery with 2 attempts (a 503 a second after the
event, then 1 to 300 s after it 95 % a 200 and SUCCESS, 5 % a 500 and EXHAUSTED), ``VACUUM ANALYZE``d
(as autovacuum leaves a history no longer written). Then migration 0008 is timed (its count of the
history: what the attempts' writers wait for) and the database analyzed again.

Stats: alternating, ``--rounds`` rounds of the statements as they were before (copied below: the
attempts reached through the endpoint's deliveries) and the service as it is
(``EndpointStatsService.stats``: the endpoint's row, the hourly counts, the percentiles), for the
24-hour and the 7-day window of the first endpoint. Each answer must be the same. Median and p95, ms.

Recording: ``record_outcomes`` batches (``--batch-sizes`` events, to both endpoints: two attempts an
event) on the same database, alternating its statement as it is (the hours counted in it) and
without the count (``recording._RECORD_ATTEMPTS``, the statement as before), ``--batches`` batches a
measurement, ``--recording-rounds`` rounds (10) after one of warm-up, which goes first in turn: the CPU of this process and of its
PostgreSQL backend (``/proc/<pid>/schedstat``) per batch. The deliveries recorded are accepted and
claimed beforehand, outside the measurement.

Timings are measured here, never asserted in tests; the load average is printed.

    .venv/bin/python bench/endpoint_stats.py
    .venv/bin/python bench/endpoint_stats.py --deliveries 20000 --rounds 50
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from databases import UUID7_AT_FUNCTION, fresh_database, server_version
from report import load_average
from seed import DEFAULT_SERVER_URL
from sqlalchemy import text

from dps_common import migrations
from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.db import Transactions, make_engine

from dps_webhooks.db import partitions
from dps_webhooks.db.id_bounds import first_id_at
from dps_webhooks.domain.attempt_outcome import AttemptResult, DeliveryStatus, EndpointEffect, Outcome
from dps_webhooks.domain.traffic_stats import traffic_window
from dps_webhooks.services import recording as recording_module
from dps_webhooks.services.endpoint_stats import EndpointStatsService
from dps_webhooks.services.intake import IncomingEvent, accept_events
from dps_webhooks.services.recording import Finished, record_outcomes
from dps_webhooks.settings import Settings

BEFORE_REVISION = "0007_event_log"

_LOAD = [
    """INSERT INTO webhook_endpoints (id, organization_id, url, status, secret_sealed)
       SELECT gen_random_uuid(), %(org)s, 'https://hooks.example.com/' || n, 'ACTIVE', '\\x00'
       FROM generate_series(1, %(endpoints)s) n""",
    # an event per delivery to each endpoint, evenly over the days but their last 5 minutes (no attempt
    # is made after the stats' "now")
    """INSERT INTO webhook_events (id, organization_id, event_type, occurred_at, body, body_bytes, received_at)
       SELECT bench_v7(t), %(org)s, 'quote.approved', t, repeat('x', 600), 600, t
       FROM (SELECT %(start)s::timestamptz + i * ((%(span)s::interval - interval '5 minutes') / %(deliveries)s) AS t
             FROM generate_series(0, %(deliveries)s - 1) i) s""",
    # 95 % SUCCESS at the second attempt, 1 to 300 s after the event, the others EXHAUSTED there
    """INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status, attempt_count,
           last_response_status, last_response_excerpt, last_error_message, last_duration_ms, last_attempted_at,
           completed_at, created_at)
       SELECT bench_v7(received_at), organization_id, endpoint, event, event_type,
              CASE WHEN ok THEN 'SUCCESS' ELSE 'EXHAUSTED' END, 2,
              CASE WHEN ok THEN 200 ELSE 500 END,
              CASE WHEN ok THEN '{"received":true}' ELSE 'Internal Server Error' END,
              CASE WHEN ok THEN NULL ELSE 'The receiver answered 500.' END,
              took, received_at + after, received_at + after + took * interval '1 millisecond', received_at
       FROM (SELECT e.received_at, e.organization_id, ep.id AS endpoint, e.id AS event, e.event_type,
                    random() < 0.95 AS ok, (random() * 300)::int AS took,
                    interval '1 second' + random() * interval '299 seconds' AS after
             FROM webhook_events e CROSS JOIN webhook_endpoints ep) AS x""",
    # the first attempt a 503 a second after the event, the second as the delivery says
    """INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, response_status,
           response_excerpt, error_message, duration_ms)
       SELECT bench_v7(d.created_at), d.id, n,
              CASE WHEN n = 2 THEN d.last_attempted_at ELSE d.created_at + interval '1 second' END,
              CASE WHEN n = 2 THEN d.last_response_status ELSE 503 END,
              CASE WHEN n = 2 THEN d.last_response_excerpt ELSE 'Service Unavailable' END,
              CASE WHEN n = 2 THEN d.last_error_message ELSE 'The receiver answered 503.' END,
              CASE WHEN n = 2 THEN d.last_duration_ms ELSE 40 END
       FROM webhook_deliveries d CROSS JOIN generate_series(1, 2) n""",
]

# The statements before issue 27's hourly counts (db/endpoint_stats.py at 09267803).
_BEFORE_HOURS = text(
    """
    WITH attempted AS (
        SELECT date_trunc('hour', a.attempted_at, 'UTC') AS hour,
               coalesce(a.response_status BETWEEN 200 AND 299, false) AND a.error_message IS NULL AS ok
        FROM webhook_deliveries d
        JOIN webhook_delivery_attempts a ON a.delivery_id = d.id
        WHERE d.endpoint_id = :endpoint AND d.id >= :low AND a.delivery_id >= :low
          AND d.last_attempted_at >= :start
          AND a.attempted_at >= :start AND a.attempted_at < :until
    )
    SELECT h.hour,
           count(a.ok) FILTER (WHERE a.ok) AS succeeded,
           count(a.ok) FILTER (WHERE NOT a.ok) AS failed
    FROM generate_series(CAST(:start AS timestamptz), CAST(:last_hour AS timestamptz), interval '1 hour') AS h(hour)
    LEFT JOIN attempted a ON a.hour = h.hour
    GROUP BY h.hour
    ORDER BY h.hour
    """
)
_BEFORE_TIME_TO_SUCCESS = text(
    """
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)
    FROM (
        SELECT extract(epoch FROM d.last_attempted_at - d.created_at) * 1000 + d.last_duration_ms AS ms
        FROM webhook_deliveries d
        WHERE d.endpoint_id = :endpoint AND d.id >= :low AND d.status = 'SUCCESS'
          AND d.completed_at >= :start AND d.completed_at < :until
    ) AS succeeded
    """
)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--endpoints", type=int, default=2)
    p.add_argument("--deliveries", type=int, default=100_000, help="per endpoint")
    p.add_argument("--days", type=int, default=8)
    p.add_argument("--rounds", type=int, default=30, help="of each variant and window, alternating")
    p.add_argument("--batches", type=int, default=300, help="recording batches per measurement")
    p.add_argument("--recording-rounds", type=int, default=10, help="of the recording, alternating")
    p.add_argument("--batch-sizes", default="1,5", help="events per recording batch")
    return p.parse_args()


def log(message: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def load(url: str, args: argparse.Namespace, now: datetime) -> tuple[uuid.UUID, uuid.UUID]:
    """The history; the organization and the first endpoint."""
    start = now - timedelta(days=args.days)
    engine = make_engine(url, pool_size=1, application_name="bench-endpoint-stats")
    with engine.begin() as connection:
        partitions.ensure_days(connection, [(start + timedelta(days=n)).date() for n in range(args.days + 1)])
    engine.dispose()
    org = uuid.uuid4()
    params = {"org": org, "start": start, "span": f"{args.days} days", "deliveries": args.deliveries,
              "endpoints": args.endpoints}  # fmt: skip
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(UUID7_AT_FUNCTION)
        for statement in _LOAD:
            conn.execute(statement, params)
        conn.execute("VACUUM ANALYZE")
        row = conn.execute("SELECT min(id::text) FROM webhook_endpoints").fetchone()
        assert row is not None
        return org, uuid.UUID(row[0])


def before(tx: Transactions, endpoint: uuid.UUID, window_name: str, now: datetime, lookback: timedelta) -> Any:
    window = traffic_window(window_name, now)
    params = {"endpoint": endpoint, "low": first_id_at(window.start - lookback), "start": window.start,
              "last_hour": window.last_hour, "until": window.until}  # fmt: skip
    with tx.read() as session:
        session.execute(text("SELECT 1 FROM webhook_endpoints WHERE id = :id"), {"id": endpoint}).one()
        hours = [tuple(row) for row in session.execute(_BEFORE_HOURS, params)]
        p50, p95 = session.execute(_BEFORE_TIME_TO_SUCCESS, params).one()
    return [(h, s, f) for h, s, f in hours], (round(p50), round(p95))


def differences(new: Any, old: Any) -> list[Any]:
    hours = [(a, b) for a, b in zip(new[0], old[0], strict=True) if a != b]
    return hours + ([(new[1], old[1])] if new[1] != old[1] else [])


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    answer = call()
    return (time.perf_counter() - started) * 1000, answer


def backend_ns(pid: int) -> int:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def recording(url: str, args: argparse.Namespace, org: uuid.UUID) -> dict[tuple[int, str], list[tuple[float, float]]]:
    """µs of CPU (this process, the backend) per ``record_outcomes`` batch, counting the hours in its
    statement (as it does) and not (its statement without the count, as before)."""
    engine = make_engine(url, pool_size=1, max_overflow=0, application_name="bench-endpoint-stats")
    tx = Transactions.for_engine(engine)
    with engine.connect() as connection:  # the one pooled connection every batch uses
        backend = connection.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
    ok = AttemptResult(200, '{"received":true}', None, 12)
    success = Outcome(DeliveryStatus.SUCCESS, None, EndpointEffect.RESET_FAILURES)
    results: dict[tuple[int, str], list[tuple[float, float]]] = {}
    counted, uncounted = recording_module._RECORD, recording_module._RECORD_ATTEMPTS
    try:
        for round_ in range(args.recording_rounds + 1):  # the first warms up (plans, caches), not counted
            for size in [int(size) for size in args.batch_sizes.split(",")]:
                for counting in ("on", "off") if round_ % 2 else ("off", "on"):  # either first in turn
                    recording_module._RECORD = counted if counting == "on" else uncounted
                    batches = []
                    for _ in range(args.batches):
                        events = [incoming(org) for _ in range(size)]
                        with tx() as session:
                            accepted = accept_events(session, events, take_up_to=lambda n: n, lease_seconds=60)
                        batches.append([Finished(c, ok, success) for c in accepted.claimed])
                    cpu, server = time.process_time(), backend_ns(backend)
                    for batch in batches:
                        with tx() as session:
                            assert len(record_outcomes(session, batch, disable_after=20)) == len(batch)
                    mine = (time.process_time() - cpu) / args.batches * 1e6
                    theirs = (backend_ns(backend) - server) / args.batches / 1e3
                    if round_:
                        results.setdefault((size, counting), []).append((mine, theirs))
    finally:
        recording_module._RECORD = counted
    tx.dispose()
    return results


def incoming(organization_id: uuid.UUID) -> IncomingEvent:
    body = (
        '{"id":"%s","type":"quote.approved","organizationId":"%s","occurredAt":"%s","data":{"quoteId":"%s"}}'
        % (uuid.uuid4(), organization_id, datetime.now(UTC).isoformat(), uuid.uuid4())
    )
    return IncomingEvent.from_envelope(body)


def main() -> None:
    args = parse_args()
    server = os.environ.get("DATABASE_URL", DEFAULT_SERVER_URL)
    print(f"# endpoint stats, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, PostgreSQL {server_version(server)},"
          f" {os.cpu_count()} cores, load {load_average()}")  # fmt: skip
    with fresh_database(server, "dps_bench_stats") as url:
        migrations.upgrade("dps_webhooks", url, BEFORE_REVISION)
        now = datetime.now(UTC)
        started = time.perf_counter()
        org, endpoint = load(url, args, now)
        log(f"loaded in {time.perf_counter() - started:.0f} s")
        started = time.perf_counter()
        migrations.upgrade("dps_webhooks", url, "head")
        migration_s = time.perf_counter() - started
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
            hour_rows = conn.execute("SELECT count(*) FROM webhook_endpoint_hours").fetchone()
        settings = Settings.model_construct()  # the defaults: the stats read only the retry schedule and lease
        tx = Transactions.for_engine(make_engine(url, pool_size=2, application_name="bench-endpoint-stats"))
        service = EndpointStatsService(tx, settings, lambda: now)
        principal = Principal(org, "bench", uuid.uuid4(), Role.ADMIN, "bench")
        times: dict[tuple[str, str], list[float]] = {}
        for round_ in range(args.rounds + 1):  # the first round warms the caches and is not counted
            for window in ("24h", "7d"):
                ms_before, old = timed(lambda: before(tx, endpoint, window, now, service._lookback))
                ms_after, new = timed(lambda: service.stats(principal, endpoint, window))
                figures = ([(h.start, h.succeeded, h.failed) for h in new.hours], (new.p50_ms, new.p95_ms))
                assert figures == old, f"{window}: the answers differ: {differences(figures, old)}"
                if round_:
                    times.setdefault((window, "before"), []).append(ms_before)
                    times.setdefault((window, "after"), []).append(ms_after)
        counted = {window: service.stats(principal, endpoint, window) for window in ("24h", "7d")}
        tx.dispose()
        stats_load = load_average()
        recorded = recording(url, args, org)
    print(f"# {args.endpoints} endpoints x {args.deliveries:,} deliveries over {args.days} days, 2 attempts each;"
          f" migration 0008 in {migration_s:.1f} s ({hour_rows[0] if hour_rows else 0:,} hourly rows);"
          f" {args.rounds} rounds, load after the stats {stats_load}, after the recording {load_average()}")  # fmt: skip
    print("| window | before p50 ms | before p95 ms | after p50 ms | after p95 ms | attempts counted |")
    print("|---|---:|---:|---:|---:|---:|")
    for window in ("24h", "7d"):
        row = [window]
        for variant in ("before", "after"):
            values = sorted(times[(window, variant)])
            row += [f"{statistics.median(values):.1f}", f"{values[int(0.95 * (len(values) - 1))]:.1f}"]
        row.append(f"{counted[window].succeeded + counted[window].failed:,}")
        print("| " + " | ".join(row) + " |")
    print(f"\n# record_outcomes, {args.batches} batches a measurement, {args.recording_rounds} rounds;"
          " median of rounds, µs of CPU per batch")  # fmt: skip
    print("| events per batch (attempts) | hours counted | this process | its PostgreSQL backend | both |")
    print("|---|---|---:|---:|---:|")
    for (size, counting), samples in recorded.items():
        mine = statistics.median(sample[0] for sample in samples)
        theirs = statistics.median(sample[1] for sample in samples)
        print(f"| {size} ({2 * size}) | {counting} | {mine:,.0f} | {theirs:,.0f} | {mine + theirs:,.0f} |")


if __name__ == "__main__":
    main()
