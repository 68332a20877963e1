"""The webhook bench's load: events committed as the api commits them, the plain ``requests`` loop,
and what the receiver wrote down, turned into rates and latencies.

All times are ``time.time()`` in this process and in the receiver's: one clock, one machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from uuid import UUID

import requests

from dps_common.db import Transactions, make_engine
from dps_common.events.envelope import envelope
from dps_common.ids import new_id
from dps_common.json import dumps
from dps_common.outbox import record_event  # what the api's outbox adapter writes with

EVENT_TYPE = "quote.updated"


def quote_snapshot(organization_id: UUID, lines: int = 4) -> dict:
    """A quote's snapshot as the api puts it in ``data`` (about 2 KB as JSON)."""
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    return {
        "id": str(new_id()), "organizationId": str(organization_id), "name": "Bench renewal FY27",
        "status": "DRAFT", "currency": "USD", "opportunityId": str(new_id()), "pricebookId": str(new_id()),
        "createdAt": now, "updatedAt": now, "version": 3, "total": "48210.00", "discountPercent": "7.50",
        "lines": [
            {"id": str(new_id()), "productId": str(new_id()), "specId": f"SPEC-{i:07d}", "name": f"Bench product {i}",
             "quantity": str(10 + i), "unitPrice": str(Decimal("199.00") + i), "discountPercent": "5.00",
             "priceModel": "PER_UNIT", "priceFrequency": "MONTHLY", "termMonths": 12, "total": "12052.50"}
            for i in range(lines)
        ],
    }


PRODUCER_THREADS = 8  # the api commits from many request threads at once; one thread would cap the rate


class Producer:
    """Events written as the api writes them: ``record_event`` in one transaction per event (the
    relay is notified at commit). Remembers each event's commit time."""

    def __init__(self, api_url: str, organization_id: UUID):
        self._engine = make_engine(api_url, pool_size=PRODUCER_THREADS, application_name="dps-bench-producer")
        self._tx = Transactions.for_engine(self._engine)
        self.organization_id = organization_id
        self.data = quote_snapshot(organization_id)

    def one(self) -> tuple[str, float]:
        with self._tx() as session:
            event_id = record_event(session, EVENT_TYPE, self.organization_id, self.data, datetime.now(UTC))
        return str(event_id), time.time()

    def burst(self, count: int) -> dict[str, float]:
        """``count`` events as fast as ``PRODUCER_THREADS`` concurrent transactions commit them (a
        single thread is bounded by one fsync per commit, far below the rate under test)."""
        with ThreadPoolExecutor(PRODUCER_THREADS) as pool:
            return dict(pool.map(lambda _: self.one(), range(count)))

    def paced(self, rate: float, seconds: float) -> dict[str, float]:
        """``rate`` events a second on a fixed schedule (late commits do not shift the next ones)."""
        commits, start = {}, time.monotonic()
        for i in range(int(rate * seconds)):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            event_id, at = self.one()
            commits[event_id] = at
        return commits

    def body(self) -> bytes:
        """The bytes a delivery of one of these events carries (for the plain loop)."""
        return dumps(envelope(EVENT_TYPE, self.organization_id, self.data, occurred_at=datetime.now(UTC)))

    def close(self) -> None:
        self._engine.dispose()


def plain_loop(url: str, ca_file: str, body: bytes, count: int) -> dict[str, float]:
    """The baseline: one ``requests.Session`` (keep-alive) POSTing the same payload with headers of
    the same shape as a delivery's, one after another. Returns each request's send time."""
    sent = {}
    with requests.Session() as session:
        session.trust_env = False
        session.verify = ca_file
        for attempt in range(count):
            event_id = str(new_id())
            headers = {
                "Content-Type": "application/json",
                "User-Agent": "dps-bench-plain-loop",
                "X-Service-Event-Id": event_id,
                "X-Service-Delivery-Id": str(new_id()),
                "X-Service-Attempt": "1",
                "webhook-id": event_id,
                "webhook-timestamp": str(int(time.time())),
                "webhook-signature": "v1," + "A" * 44,
            }
            sent[event_id] = time.time()
            response = session.post(url, data=body, headers=headers, timeout=10)
            if response.status_code >= 300:
                raise RuntimeError(f"the receiver answered {response.status_code} to the plain loop")
    return sent


class Arrivals:
    """What the receiver's workers wrote down, read incrementally: event id -> first arrival."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.first: dict[str, float] = {}
        self.duplicates = 0
        self._offsets: dict[Path, int] = {}

    def poll(self) -> None:
        for path in self.folder.glob("arrivals-*.log"):
            with open(path, "rb") as f:
                f.seek(self._offsets.get(path, 0))
                chunk = f.read()
            end = chunk.rfind(b"\n") + 1  # a line still being written waits for the next poll
            self._offsets[path] = self._offsets.get(path, 0) + end
            for line in chunk[:end].decode().splitlines():
                event_id, at = line.split()
                if event_id in self.first:
                    self.duplicates += 1
                else:
                    self.first[event_id] = float(at)

    def wait_for(self, ids, timeout: float, check: Callable[[], None]) -> int:
        """Until every id has arrived or ``timeout``; the number still missing."""
        deadline = time.monotonic() + timeout
        while True:
            self.poll()
            missing = sum(1 for i in ids if i not in self.first)
            if not missing or time.monotonic() > deadline:
                return missing
            check()
            time.sleep(0.05)


@dataclass(frozen=True)
class Measured:
    sent: int
    delivered: int
    rate: float  # delivered / (last arrival - first commit or send)
    p50_ms: float
    p99_ms: float
    max_ms: float
    offered_rate: float  # commits (or sends) per second while producing
    cpu_us: dict[str, float]  # CPU per delivered event, by component
    p95_ms: float = float("nan")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted ``values``."""
    if not values:
        return float("nan")
    rank = max(1, -(-len(values) * q // 100))
    return values[int(rank) - 1]


def measured(starts: dict[str, float], arrivals: Arrivals, cpu: dict[str, float]) -> Measured:
    """``cpu``: CPU seconds per component spent during the measurement."""
    arrived = {i: arrivals.first[i] for i in starts if i in arrivals.first}
    latencies = sorted((arrived[i] - starts[i]) * 1000 for i in arrived)
    first, last_start = min(starts.values()), max(starts.values())
    span = (max(arrived.values()) - first) if arrived else float("inf")
    n = max(len(arrived), 1)
    return Measured(
        sent=len(starts),
        delivered=len(arrived),
        rate=len(arrived) / span,
        p50_ms=percentile(latencies, 50),
        p99_ms=percentile(latencies, 99),
        max_ms=latencies[-1] if latencies else float("nan"),
        offered_rate=len(starts) / (last_start - first) if last_start > first else float("nan"),  # nan: all at once
        cpu_us={k: v * 1e6 / n for k, v in cpu.items()},
        p95_ms=percentile(latencies, 95),
    )

