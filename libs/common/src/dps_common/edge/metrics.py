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
import tempfile
from collections.abc import Iterable, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING

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
