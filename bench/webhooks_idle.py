"""Where the idle pipeline's CPU goes, per thread (issue 29's idle row, taken apart).

Builds the steady bench's system (``webhooks_stack.build``: fresh databases and vhost, the TLS
receiver, one relay, one worker), delivers ``--warmup`` events, then measures ``--windows`` idle
windows of ``--seconds`` each: CPU per second of the relay's and the worker's threads (named from
``py-spy dump``, when ``--py-spy`` is given; otherwise by thread id), the bench databases'
PostgreSQL backends, and RabbitMQ's ``beam.smp`` (the whole broker: other vhosts' traffic too).
Prints only.

    .venv/bin/python bench/webhooks_idle.py --py-spy .venv/bin/py-spy
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import psycopg
from report import load_average
from webhooks_load import Arrivals, Producer
from webhooks_stack import build, cpu_by_pid, pids_named


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds so far of each thread of ``pid`` (schedstat, nanoseconds)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out[int(task.name)] = int((task / "schedstat").read_text().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            pass
    return out


def thread_names(py_spy: str, pid: int) -> dict[int, str]:
    """Thread id -> Python thread name, from ``py-spy dump --json`` (its ``os_thread_id``)."""
    if not py_spy:
        return {}
    text = subprocess.run([py_spy, "dump", "--json", "--pid", str(pid)], capture_output=True, text=True, timeout=30).stdout
    return {t["os_thread_id"]: t.get("thread_name") or str(t["os_thread_id"])
            for t in json.loads(text) if t.get("os_thread_id")}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server-url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--windows", type=int, default=3)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--py-spy", default="")
    args = p.parse_args()
    print(f"load average before: {load_average()}", flush=True)
    with ExitStack() as stack:
        system = build(stack, args.server_url, 1, 4, None)
        producer = Producer(system.api_url, system.organization_id)
        stack.callback(producer.close)
        system.start_relay(stack)
        system.start_workers(stack, 1)
        arrivals = Arrivals(system.arrivals_dir)
        missing = arrivals.wait_for(producer.burst(args.warmup), 60, system.check_alive)
        if missing:
            raise RuntimeError(f"{missing} warm-up events not delivered")
        system.settle()
        time.sleep(2)
        procs = {"relay": system.relay.pid, "worker": system.workers[0].pid}
        names = {name: thread_names(args.py_spy, pid) for name, pid in procs.items()}
        admin = psycopg.connect(args.server_url, autocommit=True)
        databases = [url.rsplit("/", 1)[1] for url in (system.api_url, system.dispatcher_url)]

        def others() -> dict[str, float]:
            backends = [pid for (pid,) in admin.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = ANY(%s)", (databases,)).fetchall()]
            return {"postgres": sum(cpu_by_pid(backends).values()),
                    "rabbitmq": sum(cpu_by_pid(pids_named("beam.smp")).values())}

        per_window: list[dict[str, float]] = []
        for window in range(args.windows):
            before = {name: thread_cpu(pid) for name, pid in procs.items()}
            before_others = others()
            time.sleep(args.seconds)
            after = {name: thread_cpu(pid) for name, pid in procs.items()}
            after_others = others()
            row: dict[str, float] = {}
            for name in procs:
                for tid, seconds in after[name].items():
                    label = f"{name}: {names[name].get(tid, tid)}"
                    row[label] = (seconds - before[name].get(tid, seconds)) / args.seconds * 1e3
            for key in after_others:
                row[key] = (after_others[key] - before_others[key]) / args.seconds * 1e3
            per_window.append(row)
            ours = sum(v for k, v in row.items() if k != "rabbitmq")
            print(f"window {window + 1}: relay+worker+postgres {ours:.2f} ms/s, rabbitmq {row['rabbitmq']:.2f} ms/s",
                  flush=True)
        admin.close()
    keys = sorted({k for row in per_window for k in row})
    print(f"\nidle CPU ms per second, median of {args.windows} windows of {args.seconds:g} s (load after {load_average()}):")
    for key in keys:
        print(f"  {key:45} {statistics.median(row.get(key, 0.0) for row in per_window):7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
