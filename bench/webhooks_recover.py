"""Recovering an outage (issue 27): ``POST /webhook-configs/{id}/recover`` after 1,000 deliveries were
EXHAUSTED, measured against a real worker process and a real HTTPS receiver.

    .venv/bin/python bench/webhooks_recover.py                       # 1,000 deliveries, about 2 minutes
    .venv/bin/python bench/webhooks_recover.py --outage 2500 --rate 100

1. A fresh dispatcher database (migrated; dropped at the end), an HTTPS receiver in this process
   (``dps_testing.webhook_receiver``: verifies every signature, records each request), a
   ``dealpricing-webhooks worker --no-consume`` process, the HTTP app (``build_http``) in this process
   with the api's key check answered by ``dps_testing.fake_api``, and one endpoint registered through it.
2. The outage: the receiver answers 500 to everything, the retry gaps are compressed to 0 (the 8
   attempts back to back), ``--outage`` events are accepted as the consumer accepts them, and the run
   waits until every delivery is EXHAUSTED (re-activating the endpoint whenever its failure count
   disables it, as its owner would).
3. The receiver is back (200). The endpoint is set ACTIVE, then ``recover`` is called with the outage's
   window, again while ``hasMore``; the clock runs from the first call until the receiver has a 2xx
   answer for every exhausted event.
4. Checked and printed: the time to redeliver all, each call's time, the redeliveries' rate and the
   most in any one second (the spread: ``WEBHOOK_RECOVER_PER_SECOND``, ``--rate``), requests per event
   id after the outage (none twice), the arrival order against the events' creation order (oldest
   first: inversions counted), and a repeated call recovering nothing. Results go to stdout.

Needs PostgreSQL at ``DATABASE_URL`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``).
Bounded by ``--deadline``; the worker is stopped and the database dropped whatever happens.
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
from datetime import UTC, datetime, timedelta
from pathlib import Path

import falcon.testing
from sqlalchemy import func, select

from dps_common.crypto import new_key
from dps_common.db import Transactions, make_engine
from dps_common.events.envelope import envelope
from dps_common.json import dumps
from dps_testing.fake_api import FakeApi
from dps_testing.processes import write_tls_files
from dps_testing.services import fresh_database
from dps_testing.webhook_receiver import Receiver

from dps_webhooks.composition import build_http
from dps_webhooks.db.migrate import upgrade
from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint
from dps_webhooks.services.intake import IncomingEvent, accept_events
from dps_webhooks.settings import Settings

BIN = Path(sys.executable).parent
PATH = "/hooks"
TOKEN = "bench-recover-internal-token-0123456789abcdef"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--outage", type=int, default=1000, help="deliveries EXHAUSTED by the outage")
    p.add_argument("--rate", type=float, default=20.0, help="WEBHOOK_RECOVER_PER_SECOND (the service's default: 20)")
    p.add_argument("--deadline", type=int, default=900, help="seconds after which the run aborts")
    return p.parse_args()


def _abort(signum, frame):
    raise TimeoutError(f"aborted by signal {signum} (deadline or SIGTERM)")


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class Run:
    def __init__(self, args: argparse.Namespace, database_url: str, tls: dict[str, str], fake_api: FakeApi):
        self.args = args
        self.env = {
            "DATABASE_URL": database_url,
            "CURSOR_SECRET": "bench-recover-cursor-secret-0123456789abcdef",
            "WEBHOOK_SECRET_KEY": new_key(),
            "API_URL": fake_api.url,
            "INTERNAL_API_TOKEN": TOKEN,
            "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
            "WEBHOOK_RECEIVER_CA_FILE": tls["ca"],
            "WEBHOOK_RETRY_GAPS_SECONDS": "0,0,0,0,0,0,0",  # the outage in seconds, not two hours
            "WEBHOOK_RETRY_JITTER": "0",
            "WEBHOOK_DISABLE_AFTER_FAILURES": "1000",
            "WEBHOOK_RECOVER_PER_SECOND": str(args.rate),
            "WEBHOOK_POLL_INTERVAL_SECONDS": "0.1",
            "LOG_LEVEL": "ERROR",
        }
        settings = Settings.from_env(self.env)
        self.tx = Transactions.for_engine(make_engine(database_url, application_name="bench-recover"))
        self.app = build_http(settings)
        self.client = falcon.testing.TestClient(self.app)
        self.org = fake_api.provisioned("Recover bench")

    def close(self) -> None:
        self.app.context.tx.dispose()
        self.tx.dispose()

    def call(self, method: str, path: str, **kwargs) -> falcon.testing.Result:
        resp = self.client.simulate_request(method, "/external/v1" + path, headers=self.org.admin.headers, **kwargs)
        if resp.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {resp.status_code} {resp.text}")
        return resp

    def statuses(self, endpoint_id: str) -> collections.Counter[str]:
        with self.tx.read() as session:
            rows = session.execute(
                select(WebhookDelivery.status, func.count())
                .where(WebhookDelivery.endpoint_id == uuid.UUID(endpoint_id), WebhookDelivery.retry_of.is_(None))
                .group_by(WebhookDelivery.status)
            )
            return collections.Counter(dict(rows.all()))

    def endpoint_status(self, endpoint_id: str) -> str:
        with self.tx.read() as session:
            return session.scalar(select(WebhookEndpoint.status).where(WebhookEndpoint.id == uuid.UUID(endpoint_id)))

    def publish(self, count: int) -> list[str]:
        """``count`` events accepted as the consumer accepts them, 100 a transaction; their ids in order."""
        ids = []
        for start in range(0, count, 100):
            events = [
                IncomingEvent.from_envelope(
                    dumps(envelope("quote.approved", uuid.UUID(self.org.id), {"n": n})).decode()
                )
                for n in range(start, min(count, start + 100))
            ]
            with self.tx() as session:
                accept_events(session, events)
            ids += [str(event.id) for event in events]
        return ids


def worker(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [str(BIN / "dealpricing-webhooks"), "worker", "--no-consume"],
        env={**os.environ, **env},
        start_new_session=True,
    )


def inversions(order: list[int]) -> int:
    """Pairs out of order (i before j, order[i] > order[j]), by merge sort."""
    if len(order) < 2:
        return 0
    middle = len(order) // 2
    left, right = order[:middle], order[middle:]
    count = inversions(left) + inversions(right)
    left.sort()
    right.sort()
    j = 0
    for value in left:
        while j < len(right) and right[j] < value:
            j += 1
        count += j
    return count


def main() -> int:
    args = parse_args()
    signal.signal(signal.SIGALRM, _abort)
    signal.signal(signal.SIGTERM, _abort)
    signal.alarm(args.deadline)
    print(f"load before: {load()}  (2 cores here; shared with other runs)", flush=True)
    with (
        tempfile.TemporaryDirectory() as tmp,
        fresh_database("dps_bench_recover") as database_url,
    ):
        upgrade(database_url)
        tls = write_tls_files(Path(tmp))
        fake_api = FakeApi(TOKEN)
        receiver = Receiver(tls).__enter__()
        run = Run(args, database_url, tls, fake_api)
        process = worker(run.env)
        try:
            return measure(args, run, receiver)
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)
            run.close()
            receiver.close()
            fake_api.stop()


def measure(args: argparse.Namespace, run: Run, receiver: Receiver) -> int:
    receiver.answer(PATH, 500)
    created = run.call("POST", "/webhook-configs", json={"url": receiver.url(PATH, host="localhost")}).json
    receiver.secrets.append(created["secret"])
    endpoint_id = created["id"]
    since = datetime.now(UTC) - timedelta(seconds=1)

    started = time.monotonic()
    event_ids = run.publish(args.outage)
    print(f"outage: {args.outage} events accepted in {time.monotonic() - started:.1f} s; receiver answers 500", flush=True)
    while run.statuses(endpoint_id)["EXHAUSTED"] < args.outage:
        if run.endpoint_status(endpoint_id) == "DISABLED":  # its failure limit: the owner re-activates it
            run.call("PUT", f"/webhook-configs/{endpoint_id}", json={"status": "ACTIVE"})
        time.sleep(0.2)
    outage_requests = len(receiver.requests_to(PATH))
    print(f"  all {args.outage} EXHAUSTED after {time.monotonic() - started:.1f} s ({outage_requests} requests "
          f"answered 500); endpoint {run.endpoint_status(endpoint_id)}", flush=True)

    receiver.answer(PATH, 200)
    if run.endpoint_status(endpoint_id) != "ACTIVE":
        run.call("PUT", f"/webhook-configs/{endpoint_id}", json={"status": "ACTIVE"})
    until = datetime.now(UTC).isoformat()
    calls = []
    first_call = time.monotonic()
    while True:
        t = time.monotonic()
        answer = run.call("POST", f"/webhook-configs/{endpoint_id}/recover",
                          json={"since": since.isoformat(), "until": until}).json
        calls.append((answer["recovered"], answer["hasMore"], (time.monotonic() - t) * 1000))
        if not answer["hasMore"]:
            break
    wanted = set(event_ids)

    def redelivered() -> list:
        return [r for r in receiver.received[outage_requests:] if r.event_id in wanted]

    while len({r.event_id for r in redelivered()}) < len(wanted):
        if time.monotonic() - first_call > args.deadline:
            raise TimeoutError("not every event redelivered")
        time.sleep(0.05)
    requests = redelivered()
    done = max(r.arrived for r in requests)
    time.sleep(2)  # anything sent twice would arrive now
    repeat = run.call("POST", f"/webhook-configs/{endpoint_id}/recover",
                      json={"since": since.isoformat(), "until": until}).json
    time.sleep(1)
    requests = redelivered()
    per_event = collections.Counter(r.event_id for r in requests)
    position = {event_id: i for i, event_id in enumerate(event_ids)}
    arrival_order = [position[r.event_id] for r in sorted(requests, key=lambda r: r.arrived)]
    per_second = collections.Counter(int(r.arrived - first_call) for r in requests)
    elapsed = done - first_call
    unverified = sum(not r.verified for r in requests)

    print("\n## Recovery of an outage (bench/webhooks_recover.py)")
    print(f"- exhausted deliveries: {args.outage}; WEBHOOK_RECOVER_PER_SECOND {args.rate:g}")
    for i, (recovered, has_more, ms) in enumerate(calls, 1):
        print(f"- recover call {i}: recovered {recovered}, hasMore {has_more}, {ms:.0f} ms")
    print(f"- time to redeliver all (first call to last 2xx arrival): {elapsed:.1f} s "
          f"(the spread alone: {(args.outage - 1) / args.rate:.1f} s)")
    print(f"- redelivery rate: {len(requests) / elapsed:.1f}/s; most in any one second: {max(per_second.values())}")
    print(f"- requests per event after the outage: {dict(collections.Counter(per_event.values()))} "
          f"(events with none: {len(wanted - set(per_event))}); unverified signatures: {unverified}")
    print(f"- arrival order vs creation order: {inversions(arrival_order)} inversions of "
          f"{len(arrival_order) * (len(arrival_order) - 1) // 2} pairs; "
          f"largest displacement {max(abs(i - p) for i, p in enumerate(arrival_order))} places; "
          f"first 5 arrivals at positions {arrival_order[:5]}")
    print(f"- repeated call: recovered {repeat['recovered']}, hasMore {repeat['hasMore']}")
    print(f"- load after: {load()}")
    ok = (set(per_event.values()) == {1} and len(per_event) == len(wanted) and repeat["recovered"] == 0
          and unverified == 0)
    print("PASS: each exhausted delivery redelivered exactly once" if ok else "FAIL: see above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
