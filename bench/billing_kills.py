"""The billing push bench's kill case (``billing_push.py --kills N``): how long a push takes to finish
after the worker running it is SIGKILLed, the other worker taking it over.

Each round requests one push of a 20-line quote with two workers idle, waits until the stand-in has
answered a few of its calls (so the worker dies mid-push, most likely with a call in flight: the
stand-in adds latency to every call), SIGKILLs the worker that claimed it and starts a new one in its
place (as a cluster would). Measured: the kill -> the push's ``finishedAt`` (the connector's clock, the
same machine), and how the push ended.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import time
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime

from billing_stack import Process, Stack

from dps_billing.domain.limits import MAX_LINE_ITEMS

CALLS_BEFORE_KILL = 6  # of the push's 41: its product and price calls are under way


@dataclass(frozen=True)
class KillRound:
    push_id: str
    after_kill: float  # seconds: SIGKILL -> finishedAt
    status: str
    claims: int  # "push claimed" lines for the push, over every worker's log


@dataclass(frozen=True)
class Kills:
    rounds: list[KillRound]

    @property
    def seconds(self) -> list[float]:
        return [r.after_kill for r in self.rounds]

    def summary(self) -> str:
        s = self.seconds
        return (f"{len(s)} kills: after the kill p50 {statistics.median(s):.1f} s, max {max(s):.1f} s, "
                f"min {min(s):.1f} s; statuses {sorted({r.status for r in self.rounds})}")


def finished_at(push: dict[str, object]) -> float:
    return datetime.fromisoformat(str(push["finishedAt"]).replace("Z", "+00:00")).timestamp()


def _claimer(workers: list[Process], push_id: str) -> Process | None:
    for worker in workers:
        for text in worker.log_path.read_text(errors="replace").splitlines():
            try:
                record = json.loads(text)
            except ValueError:
                continue
            if record.get("message") == "push claimed" and record.get("pushId") == push_id:
                return worker
    return None


def _claims(logs: list[Process], push_id: str) -> int:
    count = 0
    for worker in logs:
        for text in worker.log_path.read_text(errors="replace").splitlines():
            count += '"push claimed"' in text and push_id in text
    return count


def _calls_of(stack: Stack, push_id: str) -> int:
    return sum(1 for r in stack.stand_in.requests(path_prefix="/v1/") if (r.idempotency_key or "").startswith(push_id))


def _wait(condition: object, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.02)


def run_kills(stack: Stack, rounds: int, timeout: float = 400) -> Kills:
    results: list[KillRound] = []
    with ExitStack() as local:
        workers = stack.start_workers(local, 2)
        every = list(workers)
        for n in range(rounds):
            snapshot = stack.quote(MAX_LINE_ITEMS, f"Bench kill {n + 1}")
            push_id = stack.request_push(snapshot)
            _wait(lambda: _calls_of(stack, push_id) >= CALLS_BEFORE_KILL, f"round {n + 1}: first calls", 60)
            victim = _claimer(workers, push_id)
            if victim is None:
                raise RuntimeError(f"round {n + 1}: no worker logged claiming {push_id}")
            os.kill(victim.process.pid, signal.SIGKILL)
            killed = time.time()
            victim.process.wait()
            workers.remove(victim)
            workers += stack.start_workers(local, 1)  # its replacement, as a cluster restarts a pod
            every.append(workers[-1])
            push: dict[str, object] = {}

            def finished() -> bool:
                nonlocal push
                push = stack.read_push(snapshot, push_id)
                return push["status"] in ("succeeded", "failed")

            _wait(finished, f"round {n + 1}: push {push_id} finished", timeout)
            result = KillRound(push_id, finished_at(push) - killed, str(push["status"]), _claims(every, push_id))
            print(f"  round {n + 1}: {result.status} {result.after_kill:.1f} s after the kill "
                  f"({result.claims} claims)", flush=True)
            results.append(result)
    return Kills(results)
