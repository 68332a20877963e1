"""``bench/webhooks.py --steady RATE``: what the webhook pipeline costs per event at a steady rate,
in CPU seconds per process, against the same pipeline in a burst, and one worker against the plain
``requests`` loop.

The same system as the full run (``webhooks_stack.build``: fresh databases and vhost, the receiver,
the api's relay, one ``dealpricing-webhooks worker``). Then ``--rounds`` rounds of [a steady window
(``RATE`` events/s for ``--steady-seconds``, one transaction per event as the api commits them), a
burst of ``--events``, a plain loop of ``--loop-requests``], each started on a quiet stack. CPU is
read from ``/proc/<pid>/stat`` per process before and after each window:

- relay, workers: their processes;
- postgres: the backends of the bench's two databases (``pg_stat_activity``, so other databases'
  work on a shared server is left out; a committing backend flushes its own WAL); shown apart and
  outside the pipeline: ``pg server processes`` (WAL writer, checkpointer, background writer,
  launchers: the whole server's, mostly other databases' on a shared machine) and ``postgres
  (server)``, every ``postgres`` process;
- rabbitmq: the broker's ``beam.smp`` (the whole server: another vhost's traffic lands there too);
- receiver and bench (the producer or the loop), outside the pipeline, for reference.

"pipeline" = relay + workers + postgres + rabbitmq, per delivered event. Each round first measures
the stack idle for 5 s (nothing sent: heartbeats, polls, housekeeping), shown per second divided by
RATE: the part of the steady figure that does not depend on the events. The table shows each
case's median round by rate, each component's CPU the median of that component over the rounds
(``postgres: producer's`` is the part of ``postgres`` spent in the producer's own transactions, as
the api's), the ratio the median of per-round ratios.
With ``--py-spy PATH``, one more steady window (not measured) records the relay and the worker with
py-spy (raw collapsed stacks in ``--profile-dir``), and prints their hottest frames.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import time
from collections import Counter
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

import psycopg
from report import RESULTS_DIR, load_average
from run import git_revision
from webhooks_load import Arrivals, Measured, Producer, measured, plain_loop
from webhooks_report import machine, versions
from webhooks_stack import Stack, build, cpu_by_pid, cpu_delta, pids_named

PIPELINE = ("relay", "workers", "postgres", "rabbitmq")
PRODUCER_APPLICATION = "dps-bench-producer"  # webhooks_load.Producer's engine
SHOWN = (*PIPELINE, "postgres: producer's", "pg server processes", "postgres (server)", "receiver", "bench")


class SteadyBench:
    def __init__(self, stack: Stack, producer: Producer, args: argparse.Namespace):
        self.stack, self.producer, self.args = stack, producer, args
        self.arrivals = Arrivals(stack.arrivals_dir)
        self.body = producer.body()
        self._databases = [url.rsplit("/", 1)[1] for url in (stack.api_url, stack.dispatcher_url)]
        self._admin = psycopg.connect(args.server_url, autocommit=True)

    def close(self) -> None:
        self._admin.close()

    def _postgres_pids(self, ours: bool) -> list[int]:
        """``ours``: the bench databases' backends (and their autovacuum workers); otherwise the
        server's own processes, which have no database (WAL writer, checkpointer, ...)."""
        where = "datname = ANY(%s)" if ours else "datname IS NULL AND %s::text[] IS NOT NULL"
        rows = self._admin.execute(f"SELECT pid FROM pg_stat_activity WHERE {where}", (self._databases,)).fetchall()
        return [pid for (pid,) in rows]

    def _producer_pids(self) -> list[int]:
        """The producer's backends: the api's own transactions (``record_event`` and its commit)."""
        rows = self._admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = ANY(%s) AND application_name = %s",
            (self._databases, PRODUCER_APPLICATION),
        ).fetchall()
        return [pid for (pid,) in rows]

    def cpu(self) -> dict[str, dict[int, float]]:
        stack = self.stack
        return {
            "relay": cpu_by_pid(stack.relay.pids()) if stack.relay else {},
            "workers": cpu_by_pid([pid for w in stack.workers for pid in w.pids()]),
            "postgres": cpu_by_pid(self._postgres_pids(ours=True)),
            "rabbitmq": cpu_by_pid(pids_named("beam.smp")),
            "pg server processes": cpu_by_pid(self._postgres_pids(ours=False)),
            "postgres: producer's": cpu_by_pid(self._producer_pids()),
            "postgres (server)": cpu_by_pid(pids_named("postgres")),
            "receiver": cpu_by_pid(stack.receiver.pids()),
            "bench": cpu_by_pid([os.getpid()]),
        }

    def _deliver(self, starts: dict[str, float], what: str) -> None:
        timeout = max(60.0, len(starts) / 20)
        missing = self.arrivals.wait_for(starts, timeout, self.stack.check_alive)
        if missing:
            raise RuntimeError(f"{what}: {missing} of {len(starts)} events not delivered after {timeout:.0f} s")

    def _measure(self, produce, what: str) -> Measured:
        self.stack.settle()
        before = self.cpu()
        starts = produce()
        self._deliver(starts, what)
        time.sleep(0.3)  # the last outcomes' recording
        return measured(starts, self.arrivals, cpu_delta(before, self.cpu()))

    def warm_up(self) -> None:
        print(f"warm-up: {self.args.warmup} events ...", flush=True)
        self._deliver(self.producer.burst(self.args.warmup), "warm-up")

    def idle(self, seconds: float = 5.0) -> dict[str, float]:
        """CPU seconds per second of each component with nothing to do (heartbeats, polls, the
        broker's and the database's own housekeeping): the floor under any steady rate."""
        self.stack.settle()
        before = self.cpu()
        time.sleep(seconds)
        return {k: v / seconds for k, v in cpu_delta(before, self.cpu()).items()}

    def steady(self) -> Measured:
        return self._measure(lambda: self.producer.paced(self.args.steady, self.args.steady_seconds), "steady")

    def burst(self) -> Measured:
        return self._measure(lambda: self.producer.burst(self.args.events), "burst")

    def loop(self) -> Measured:
        url = self.stack.receiver_origin + "/hooks"
        return self._measure(lambda: plain_loop(url, self.stack.tls["ca"], self.body, self.args.loop_requests), "loop")

    def profile(self, py_spy: str, folder: Path) -> dict[str, Path]:
        """One more steady window with py-spy on the relay and the worker (not measured)."""
        folder.mkdir(parents=True, exist_ok=True)
        targets = {"relay": self.stack.relay.pid, "worker": self.stack.workers[0].pid}
        seconds = int(self.args.steady_seconds)
        recorders = {
            name: subprocess.Popen(
                [py_spy, "record", "--pid", str(pid), "--duration", str(seconds), "--rate", "500", "--format", "raw", "--gil",
                 "--nonblocking", "--output", str(folder / f"{name}.txt")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            for name, pid in targets.items()
        }
        time.sleep(1.0)
        self._deliver(self.producer.paced(self.args.steady, seconds - 2), "profiled steady")
        for recorder in recorders.values():
            recorder.wait(timeout=seconds + 30)
        return {name: folder / f"{name}.txt" for name in targets}


def _code_tree() -> Path:
    """The work tree of the code under test (``PYTHONPATH`` may point at another tree's sources)."""
    import dps_common

    return Path(dps_common.__file__).resolve().parents[4]


def median_by_component(ms: list[Measured]) -> Measured:
    """The median round by rate, with each component's CPU the median of its own over the rounds:
    a burst of someone else's traffic on the shared broker or database in one round moves one
    component of one round, not the whole row."""
    middle = sorted(ms, key=lambda m: m.rate)[len(ms) // 2]
    cpu = {k: statistics.median(m.cpu_us[k] for m in ms) for k in middle.cpu_us}
    return dataclasses.replace(middle, cpu_us=cpu)


def pipeline_us(m: Measured) -> float:
    return sum(m.cpu_us[c] for c in PIPELINE)


def hottest(raw: Path, top: int = 25) -> list[str]:
    """Inclusive share of samples per frame (function and file), from py-spy's raw collapsed stacks,
    only samples holding the GIL (``--gil``: roughly, Python on the CPU)."""
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        frames = {frame.split(" (")[0] + " (" + frame.split("(")[-1].split(":")[0].rsplit("/", 1)[-1] + ")"
                  for frame in stack.split(";")[1:]}
        for frame in frames:
            inclusive[frame] += n
    return [f"{100 * n / total:5.1f} %  {frame}" for frame, n in inclusive.most_common(top)] if total else []


def _row(name: str, m: Measured) -> str:
    cells = " | ".join(f"{m.cpu_us[c]:,.0f}" for c in SHOWN)
    return (f"| {name} | {m.rate:,.0f} | {m.p50_ms:.1f} | {m.p95_ms:.1f} | {m.p99_ms:.1f} | {m.delivered:,}/{m.sent:,} | "
            f"**{pipeline_us(m):,.0f}** | {cells} |")


def render(info: dict[str, str], setup: dict[str, str], steady: Measured, burst: Measured, loop: Measured,
           rounds: dict[str, list[Measured]], ratios: list[float], idle: dict[str, float], rate: float) -> str:
    out = [f"# Webhook pipeline at a steady rate, {info['date']}", "", "## Machine", ""]
    out += [f"- {k}: {v}" for k, v in info.items()]
    out += ["", "## Setup", ""] + [f"- {k}: {v}" for k, v in setup.items()]
    out += [
        "", "## Results (median round; CPU µs per delivered event)", "",
        "| run | events/s | p50 ms | p95 ms | p99 ms | delivered | pipeline | " + " | ".join(SHOWN) + " |",
        "|---|---:|---:|---:|---:|---:|---:|" + "---:|" * len(SHOWN),
        _row("steady", steady), _row("burst", burst), _row("plain loop", loop),
        f"| idle (nothing sent), per second / {rate:g} | – | – | – | – | – | "
        f"**{sum(idle[c] for c in PIPELINE) * 1e6 / rate:,.0f}** | "
        + " | ".join(f"{idle[c] * 1e6 / rate:,.0f}" for c in SHOWN) + " |",
        "",
        f"- one worker's burst / plain loop (median of per-round ratios): **{statistics.median(ratios):.3f}** "
        f"(rounds: {', '.join(f'{r:.3f}' for r in ratios)})",
    ]
    for name, ms in rounds.items():
        out.append(f"- {name} per round: " + ", ".join(
            f"{m.rate:,.0f}/s pipeline {pipeline_us(m):,.0f} µs p50 {m.p50_ms:.1f} ms" for m in ms))
    out += ["", "## Issue 29's rows", "", *issue_rows(steady, burst, ratios, idle, rate)]
    return "\n".join(out) + "\n"


def issue_rows(steady: Measured, burst: Measured, ratios: list[float], idle: dict[str, float], rate: float) -> list[str]:
    """Issue 29's table for the webhook pipeline, from this run: each row's figure, goal and verdict."""
    idle_ms = sum(idle[c] for c in PIPELINE) * 1e3
    rows = [
        (f"pipeline CPU per event at a steady {rate:g}/s", pipeline_us(steady) / 1e3, "<=", 2.0, "ms"),
        (f"the same, p50 from commit to arrival (p95 {steady.p95_ms:.1f} ms)", steady.p50_ms, "<=", 50.0, "ms"),
        (f"burst of {burst.sent:,}, CPU per event", pipeline_us(burst) / 1e3, "<=", 1.2, "ms"),
        ("one delivery worker / plain requests loop (median of per-round ratios)", statistics.median(ratios), ">=", 0.8, ""),
        ("idle pipeline, nothing sent, CPU per second (relay + worker + its databases' backends + RabbitMQ)",
         idle_ms, "<=", 5.0, "ms"),
    ]
    out = ["| measure | goal | this run | verdict |", "|---|---:|---:|---|"]
    for name, value, op, goal, unit in rows:
        met = value <= goal if op == "<=" else value >= goal
        sign = "≤" if op == "<=" else "≥"
        out.append(f"| {name} | {sign} {goal:g} {unit} | {value:.3f} {unit} | {'met' if met else '**MISS**'} |")
    return out


def run(args: argparse.Namespace, command: str) -> int:
    started, load_before = time.monotonic(), load_average()
    rounds: dict[str, list[Measured]] = {"steady": [], "burst": [], "plain loop": []}
    profiles: dict[str, Path] = {}
    idles: list[dict[str, float]] = []
    with ExitStack() as stack:
        print("setting up: databases, vhost, CA, receiver ...", flush=True)
        system = build(stack, args.server_url, args.receiver_workers, args.receiver_threads, args.concurrency)
        producer = Producer(system.api_url, system.organization_id)
        stack.callback(producer.close)
        system.start_relay(stack)
        system.start_workers(stack, 1)
        bench = SteadyBench(system, producer, args)
        stack.callback(bench.close)
        bench.warm_up()
        for round_no in range(1, args.rounds + 1):
            idle = bench.idle()
            idles.append(idle)
            print(f"  round {round_no} idle: CPU ms per second: " + ", ".join(f"{k} {v * 1000:.1f}" for k, v in idle.items()),
                  flush=True)
            for name, step in (("steady", bench.steady), ("burst", bench.burst), ("plain loop", bench.loop)):
                m = step()
                rounds[name].append(m)
                print(f"  round {round_no} {name:10} {m.rate:8,.0f}/s p50 {m.p50_ms:7.1f} ms  pipeline "
                      f"{pipeline_us(m):7,.0f} µs/event ({', '.join(f'{k} {m.cpu_us[k]:,.0f}' for k in SHOWN)})",
                      flush=True)
        if args.py_spy:
            profiles = bench.profile(args.py_spy, Path(args.profile_dir))
        info = machine(args.server_url)
        duplicates = bench.arrivals.duplicates
    steady, burst = median_by_component(rounds["steady"]), median_by_component(rounds["burst"])
    loop = sorted(rounds["plain loop"], key=lambda m: m.rate)[len(rounds["plain loop"]) // 2]
    ratios = [b.rate / lp.rate for b, lp in zip(rounds["burst"], rounds["plain loop"])]
    setup = {
        "command": command,
        "code": f"{git_revision(_code_tree())} (the tree the services were imported from: {_code_tree()})",
        "versions": versions(),
        "steady": f"{args.steady:g} events/s for {args.steady_seconds:g} s, one transaction per event; "
                  f"burst: {args.events:,} events from 8 threads; plain loop: {args.loop_requests:,} POSTs; "
                  f"{args.rounds} rounds, one worker",
        "settings from this environment (the relay and worker inherit it)": ", ".join(
            f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith(("RELAY_", "WEBHOOK_"))) or "none: defaults",
        "load average (1 min) before / after": f"{load_before} / {load_average()}",
        "duplicate arrivals": str(duplicates),
        "duration": f"{time.monotonic() - started:.0f} s",
    }
    idle = {k: statistics.median(i[k] for i in idles) for k in idles[0]}
    text = render(info, setup, steady, burst, loop, rounds, ratios, idle, args.steady)
    print("\n" + text)
    for name, path in profiles.items():
        print(f"py-spy, {name} ({path}):")
        print("\n".join(hottest(path)))
    if not args.no_write:
        RESULTS_DIR.mkdir(exist_ok=True)
        label = f"-{args.label}" if args.label else ""
        path = RESULTS_DIR / f"{datetime.now().astimezone().date().isoformat()}-webhooks-steady{label}.md"
        path.write_text(text)
        print(f"written to {path}")
    return 0
