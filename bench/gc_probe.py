"""gunicorn config hooks that record every garbage collection of a worker (``gc.callbacks``).

Loaded by bench/run.py with ``--config <this file>`` when ``BENCH_GC_DIR`` is set (the servers'
other settings stay on the command line). Each worker keeps (start, duration, generation) of each
collection in memory, times from ``time.monotonic_ns()`` (CLOCK_MONOTONIC: the same clock in every
process of the machine, so the run can tell which measurement a pause fell in), and writes them to
``$BENCH_GC_DIR/<pid>.gc`` when it exits. A collection stops the whole worker: under gevent every
request in flight on it waits, which is what a latency's tail shows.
"""

import gc
import os
import time
from array import array

_starts = array("q")
_durations = array("q")
_generations = array("b")
_began = 0


def _on_gc(phase: str, info: dict) -> None:
    global _began
    if phase == "start":
        _began = time.monotonic_ns()
    else:
        _starts.append(_began)
        _durations.append(time.monotonic_ns() - _began)
        _generations.append(info["generation"])


def post_worker_init(worker: object) -> None:
    gc.callbacks.append(_on_gc)


def worker_exit(server: object, worker: object) -> None:
    directory = os.environ.get("BENCH_GC_DIR")
    if not directory or worker.pid != os.getpid():  # the master's own call for a worker it lost
        return
    with open(os.path.join(directory, f"{os.getpid()}.gc"), "w") as out:
        out.writelines(f"{s} {d} {g}\n" for s, d, g in zip(_starts, _durations, _generations))
