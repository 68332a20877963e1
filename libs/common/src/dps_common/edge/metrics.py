"""Prometheus metrics of a server with several worker processes: prometheus-client's multiprocess mode.

Each gunicorn worker counts in memory-mapped files under ``PROMETHEUS_MULTIPROC_DIR`` (one directory
per server, emptied when the server starts); ``/metrics`` adds up every worker's files, so a scrape
sees the whole server whichever worker answers it. The gunicorn hooks (``dps_common.gunicorn_conf``)
call ``prepare``, ``worker_exited`` and ``finish``. A process that runs alone (the outbox relay, the
webhook worker, tests) has no such directory and ``registry()`` is the default registry.

The environment variable must be set before prometheus_client is first imported in a worker (its
value class is chosen at import): ``prepare`` runs in gunicorn's master before it forks, and nothing
the master imports loads prometheus_client before that (a test holds this).
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import Metric

DIRECTORY_ENV = "PROMETHEUS_MULTIPROC_DIR"
_OWNED_ENV = "DPS_METRICS_DIR_OWNED"  # set when prepare() made the directory (and finish() removes it)


def prepare(environ: MutableMapping[str, str] = os.environ) -> Path:
    """The server's metrics directory, empty: ``PROMETHEUS_MULTIPROC_DIR``'s with its metric files
    removed, or a new one (in /dev/shm where there is one), set in ``environ`` for the workers."""
    given = environ.get(DIRECTORY_ENV, "").strip()
    if given:
        directory = Path(given)
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*.db"):  # only prometheus-client's files: never wipe what is not ours
            stale.unlink(missing_ok=True)
    else:
        parent = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        directory = Path(tempfile.mkdtemp(prefix="dps-metrics-", dir=parent))
        environ[_OWNED_ENV] = str(directory)
    environ[DIRECTORY_ENV] = str(directory)
    return directory


def worker_exited(pid: int) -> None:
    """Drop a dead worker's live gauges (its counters stay: they still count toward the server's total)."""
    if os.environ.get(DIRECTORY_ENV):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


def finish(environ: MutableMapping[str, str] = os.environ) -> None:
    """Remove the directory ``prepare`` made (a given one is left for the next start to empty)."""
    owned = environ.pop(_OWNED_ENV, None)
    if owned:
        shutil.rmtree(owned, ignore_errors=True)


def worker_value_class(pid: int) -> type:
    """prometheus-client's multiprocess value (``values.MultiProcessValue``), the same files and
    records, for a gevent worker: its ``inc`` took 1.4 us (a lock, a call asking for the pid to
    notice a fork, the file's position looked up again), five times a request; this one 0.2 us.

    What makes the shortcuts safe there: the worker does not fork again (the pid is given once), its
    code runs in one thread (gevent's greenlets; nothing here yields, so no increment is interleaved
    with another: prometheus-client takes its lock for threads), and a value's position in its file
    never moves (the file grows at its end; the mapping is read from the file object at each write,
    as it is replaced when the file grows). Relies on ``MmapedDict``'s ``_m`` and ``_positions`` of
    the pinned prometheus-client (constraints.txt); a test checks the values reach ``/metrics``."""
    from prometheus_client.mmap_dict import MmapedDict, mmap_key

    directory = os.environ[DIRECTORY_ENV]
    files: dict[str, MmapedDict] = {}
    pack = struct.Struct(b"dd").pack

    class WorkerValue:
        _multiprocess = True

        def __init__(self, typ: str, metric_name: str, name: str, labelnames: Any, labelvalues: Any, help_text: str,
                     multiprocess_mode: str = "", **kwargs: Any):
            prefix = f"{typ}_{multiprocess_mode}" if typ == "gauge" else typ
            file = files.get(prefix)
            if file is None:
                file = files[prefix] = MmapedDict(os.path.join(directory, f"{prefix}_{pid}.db"))  # type: ignore[no-untyped-call]
            self._file = file
            key = mmap_key(metric_name, name, labelnames, labelvalues, help_text)
            self._value, self._timestamp = file.read_value(key)  # type: ignore[no-untyped-call]  # adds the record if new
            self._position: int = file._positions[key]

        def inc(self, amount: float) -> None:
            self._value += amount
            self._timestamp = 0.0
            self._file._m[self._position:self._position + 16] = pack(self._value, 0.0)

        def set(self, value: float, timestamp: float | None = None) -> None:
            self._value, self._timestamp = value, timestamp or 0.0
            self._file._m[self._position:self._position + 16] = pack(value, self._timestamp)

        def set_exemplar(self, exemplar: Any) -> None:
            return  # none in multiprocess mode (as prometheus-client's)

        def get(self) -> float:
            return float(self._value)

        def get_exemplar(self) -> None:
            return None

    return WorkerValue


def registry() -> CollectorRegistry:
    """What ``/metrics`` renders: every worker's samples in multiprocess mode (and ``process_*`` of
    every process of the server, ``dps_common.runtime_metrics.ServerProcesses``), else this process's
    default registry; plus the collectors read at scrape time (``runtime_metrics.add_scrape_collector``)."""
    from prometheus_client import REGISTRY, CollectorRegistry, multiprocess

    from dps_common import runtime_metrics

    combined = CollectorRegistry(auto_describe=False)
    if os.environ.get(DIRECTORY_ENV):
        multiprocess.MultiProcessCollector(combined)  # type: ignore[no-untyped-call]
        combined.register(runtime_metrics.ServerProcesses())
    else:
        combined.register(_Default(REGISTRY))
    for collector in runtime_metrics.scrape_collectors():
        combined.register(collector)
    return combined


class _Default:
    """The default registry's samples inside another registry."""

    def __init__(self, registry: CollectorRegistry):
        self._registry = registry

    def collect(self) -> Iterable[Metric]:
        return self._registry.collect()
