"""Throttle per endpoint (issue 27): two delivery worker processes send 200 deliveries to one endpoint
with ``rateLimitPerSecond=5``; the receiver counts the most requests that arrived in any one second.

    .venv/bin/python bench/webhooks_throttle.py                    # 200 deliveries at 5/s, about a minute
    .venv/bin/python bench/webhooks_throttle.py --deliveries 500 --rate 20 --workers 3

1. A fresh dispatcher database (migrated; dropped at the end), an HTTPS receiver in this process
   (``dps_testing.webhook_receiver``: verifies every signature, notes each request's arrival), one
   endpoint with the rate, and ``--workers`` ``dealpricing-webhooks worker --no-consume`` processes
   sharing the machine's Redis (``REDIS_URL``, default ``redis://127.0.0.1:6379/0``, under a key
   prefix of the run's own, deleted at the end), every other setting the service's default
   (16 threads each, a 1 s poll, a 2 s horizon, a 60 s lease).
2. Once both workers are up, ``--deliveries`` events are accepted as the consumer accepts them (one
   transaction: all due at once) and the clock starts.
3. Printed when the receiver has every delivery: the most arrivals in any one-second window (sliding:
   from each arrival, the ones less than a second after it), the total time (from the events' commit to
   the last arrival) and the pace in between, each delivery's attempt count and status, requests per
   delivery (none twice), and the machine's load.

Needs PostgreSQL at ``DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``) and
Redis. Bounded by ``--deadline``; the workers are stopped and the database dropped whatever happens.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import func, select

from dps_common.crypto import new_key
from dps_common.db import Transactions, make_engine
from dps_common.events.envelope import envelope
from dps_common.json import dumps
from dps_testing.processes import write_tls_files
from dps_testing.rate_limits import key_prefix, redis_url
from dps_testing.services import fresh_database
from dps_testing.webhook_receiver import Receiver

from dps_webhooks.adapters.signing_secrets import SecretSealer, new_signing_secret
from dps_webhooks.db.migrate import upgrade
from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint
from dps_webhooks.services.intake import IncomingEvent, accept_events
from dps_webhooks.settings import Settings

BIN = Path(sys.executable).parent
PATH = "/throttled"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--deliveries", type=int, default=200)
    p.add_argument("--rate", type=int, default=5, help="the endpoint's rateLimitPerSecond")
    p.add_argument("--workers", type=int, default=2, help="delivery worker processes")
    p.add_argument("--deadline", type=int, default=600, help="seconds after which the run aborts")
    return p.parse_args()


def _abort(signum, frame):
    raise TimeoutError(f"aborted by signal {signum} (deadline or SIGTERM)")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def busiest_second(arrivals: list[float]) -> tuple[int, float]:
    """The most arrivals within one second of each other, and when that window starts."""
    arrivals = sorted(arrivals)
    most, at, first = 0, 0.0, 0
    for last, arrived in enumerate(arrivals):
        while arrived - arrivals[first] >= 1.0:
            first += 1
        if last - first + 1 > most:
            most, at = last - first + 1, arrivals[first]
    return most, at


def main() -> int:
    args = parse_args()
    signal.signal(signal.SIGALRM, _abort)
    signal.signal(signal.SIGTERM, _abort)
    signal.alarm(args.deadline)
    store_url = redis_url()
    with tempfile.TemporaryDirectory() as tmp, fresh_database("dps_bench_throttle") as database_url, \
            key_prefix(store_url, "dps-bench-throttle") as prefix:
        tls = write_tls_files(Path(tmp))
        with Receiver(tls) as receiver:
            upgrade(database_url)
            run(args, database_url, store_url, prefix, tls["ca"], receiver)
    return 0


def run(args: argparse.Namespace, database_url: str, store_url: str, prefix: str, ca_file: str,
        receiver: Receiver) -> None:
    env = {
        "DATABASE_URL": database_url,
        "CURSOR_SECRET": "bench-throttle-cursor-secret-0123456789abcdef",
        "WEBHOOK_SECRET_KEY": new_key(),
        "API_URL": "https://127.0.0.1:9",
        "INTERNAL_API_TOKEN": "bench-throttle-internal-token-0123456789abcdef",
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "WEBHOOK_RECEIVER_CA_FILE": ca_file,
        "REDIS_URL": store_url,
        "RATE_LIMIT_KEY_PREFIX": prefix,
        "LOG_LEVEL": "WARNING",
    }
    settings = Settings.from_env(env)
    tx = Transactions.for_engine(make_engine(database_url, application_name="bench-throttle"))
    endpoint_id, organization_id, secret = uuid.uuid4(), uuid.uuid4(), new_signing_secret()
    receiver.secrets.append(secret)
    with tx() as session:
        session.add(WebhookEndpoint(
            id=endpoint_id, organization_id=organization_id, url=receiver.url(PATH, host="localhost"),
            event_types=[], status="ACTIVE", rate_limit_per_second=args.rate,
            secret_sealed=SecretSealer(settings.secret_key).seal(endpoint_id, secret),
        ))
    workers = [subprocess.Popen([str(BIN / "dealpricing-webhooks"), "worker", "--no-consume"],
                                env={**os.environ, **env}, start_new_session=True) for _ in range(args.workers)]
    try:
        time.sleep(5)  # both up and polling (a worker starts in about a second)
        for process in workers:
            if process.poll() is not None:
                raise RuntimeError(f"a worker exited at start ({process.returncode})")
        events = [IncomingEvent.from_envelope(dumps(envelope("quote.approved", organization_id, {"n": n})).decode())
                  for n in range(args.deliveries)]
        print(f"load before: {load()}")
        with tx() as session:
            accept_events(session, events)
        started = time.monotonic()
        receiver.wait_for(args.deliveries, path=PATH, timeout=args.deadline)
        time.sleep(1.5)  # the last results recorded (the record linger) before they are read
        report(args, tx, receiver, started, endpoint_id)
    finally:
        for process in workers:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in workers:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        tx.dispose()


def report(args: argparse.Namespace, tx: Transactions, receiver: Receiver, started: float, endpoint_id: uuid.UUID) -> None:
    """``started``: time.monotonic() at the events' commit, the receiver's clock."""
    arrivals = sorted(request.arrived for request in receiver.requests_to(PATH))
    most, window_at = busiest_second(arrivals)
    per_delivery = collections.Counter(request.headers["x-service-delivery-id"] for request in receiver.requests_to(PATH))
    with tx.read() as session:
        rows = session.execute(
            select(WebhookDelivery.status, WebhookDelivery.attempt_count, func.count())
            .where(WebhookDelivery.endpoint_id == endpoint_id)
            .group_by(WebhookDelivery.status, WebhookDelivery.attempt_count)
        ).all()
    unverified = sum(1 for request in receiver.requests_to(PATH) if not request.verified)
    attempts_sent = collections.Counter(request.headers["x-service-attempt"] for request in receiver.requests_to(PATH))
    span = arrivals[-1] - arrivals[0]
    print(f"deliveries: {args.deliveries}, rateLimitPerSecond: {args.rate}, worker processes: {args.workers}")
    print(f"most arrivals in any one-second window: {most} (window from +{window_at - arrivals[0]:.2f} s)")
    if len(arrivals) > args.rate:  # the margin left: rate + 1 arrivals in a row span more than a second
        tightest = min(arrivals[i + args.rate] - arrivals[i] for i in range(len(arrivals) - args.rate))
        gaps = [later - earlier for earlier, later in zip(arrivals, arrivals[1:], strict=False)]
        print(f"shortest span of {args.rate + 1} arrivals in a row: {tightest:.3f} s; "
              f"gaps between arrivals: shortest {min(gaps) * 1000:.0f} ms, longest {max(gaps) * 1000:.0f} ms")
    print(f"total: {arrivals[-1] - started:.1f} s from the events' commit to the last arrival; "
          f"first to last arrival {span:.1f} s, {(len(arrivals) - 1) / span:.2f}/s")
    print(f"requests: {len(arrivals)}; per delivery: {dict(collections.Counter(per_delivery.values()))}; "
          f"X-Service-Attempt: {dict(attempts_sent)}; unverified: {unverified}")
    print(f"deliveries by (status, attempt_count): {sorted((s, a, n) for s, a, n in rows)}")
    print(f"load after: {load()}")


if __name__ == "__main__":
    sys.exit(main())
