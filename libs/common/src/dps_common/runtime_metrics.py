"""Metrics beyond HTTP: build info, the database pools, process and GC, and gauges read from the
database at scrape time (outbox lag, deliveries due, pushes queued).

- ``dps_build_info{service,version,commit}`` 1: the service's distribution version and
  ``BUILD_COMMIT`` (``unknown`` when the image was built without it).
- ``dps_db_pool_connections{pool,state}``: per process, ``in_use`` (checked out), ``overflow`` (in use
  beyond the pool size) and ``waiting`` (checkouts waiting for a connection); ``pool`` is the engine's
  application name. Updated at each checkout and checkin (``MeteredQueuePool``).
- Process and GC. A process that runs alone (relays, workers) serves prometheus-client's own
  ``process_*`` and ``python_gc_*`` collectors from its default registry. In a gunicorn server
  (multiprocess mode) those would describe only the worker that answers the scrape, so instead:
  ``process_*`` is read at scrape time by prometheus-client's ``ProcessCollector`` for every live
  process of the server (``/proc/<pid>``: the master and each worker), one series per ``pid``; and
  each worker counts its own collections from ``gc.callbacks`` into ``python_gc_collections_total``,
  ``python_gc_objects_collected_total`` and ``python_gc_objects_uncollectable_total`` (summed over the
  workers, by ``generation``), the names ``GCCollector`` uses.
- ``ScrapeGauges``: values read at each scrape from a cheap query (an index-backed aggregate), registered with
  ``add_scrape_collector``; a failing query yields no sample (and logs), never a failed scrape.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from importlib import metadata
from typing import Any

from prometheus_client import Counter, Gauge
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy.pool import QueuePool

log = logging.getLogger("dps.metrics")

BUILD_INFO = Gauge(
    "dps_build_info", "The running build: the service's version and commit", ["service", "version", "commit"],
    multiprocess_mode="max",
)
POOL_CONNECTIONS = Gauge(
    "dps_db_pool_connections",
    "Database pool connections of this process by state: in_use, overflow (in use beyond the pool size), waiting",
    ["pool", "state"],
    multiprocess_mode="liveall",  # one series per live process (pid)
)
# registry=None: in multiprocess mode the files are what counts; alone, GCCollector has these names
_GC_COLLECTIONS = Counter("python_gc_collections", "Garbage collections, by generation", ["generation"], registry=None)
_GC_COLLECTED = Counter("python_gc_objects_collected", "Objects collected during GC", ["generation"], registry=None)
_GC_UNCOLLECTABLE = Counter(
    "python_gc_objects_uncollectable", "Uncollectable objects found during GC", ["generation"], registry=None
)

_SCRAPE_COLLECTORS: dict[str, Collector] = {}
_lock = threading.Lock()


def set_build_info(service: str, distribution: str) -> None:
    try:
        version = metadata.version(distribution)
    except metadata.PackageNotFoundError:
        version = "unknown"
    BUILD_INFO.labels(service, version, os.environ.get("BUILD_COMMIT", "").strip() or "unknown").set(1)


class MeteredQueuePool(QueuePool):
    """SQLAlchemy's QueuePool that keeps ``dps_db_pool_connections`` of its engine current, once
    ``meter(name)`` named it (``dps_common.db.make_engine`` does)."""

    _metric_in_use: Any = None

    def meter(self, pool_name: str) -> None:
        self._metered_name = pool_name
        self._metric_in_use = POOL_CONNECTIONS.labels(pool_name, "in_use")
        self._metric_overflow = POOL_CONNECTIONS.labels(pool_name, "overflow")
        self._metric_waiting = POOL_CONNECTIONS.labels(pool_name, "waiting")
        self._metric_waiting.set(0)
        self._update()

    def recreate(self) -> QueuePool:
        fresh = super().recreate()
        if self._metric_in_use is not None and isinstance(fresh, MeteredQueuePool):
            fresh.meter(self._metered_name)
        return fresh

    def _update(self) -> None:
        if self._metric_in_use is None:
            return
        self._metric_in_use.set(self.checkedout())
        self._metric_overflow.set(max(0, self.overflow()))

    def _do_get(self) -> Any:
        if self._metric_in_use is not None and self._pool.empty():  # about to wait (or open an overflow connection): count it
            self._metric_waiting.inc()
            try:
                record = super()._do_get()
            finally:
                self._metric_waiting.dec()
        else:
            record = super()._do_get()
        self._update()
        return record

    def _do_return_conn(self, record: Any) -> None:
        super()._do_return_conn(record)
        self._update()


# SQLAlchemy names a pool's logger after its class's module; outside ``sqlalchemy.*`` it misses the
# WARN level SQLAlchemy gives its own loggers, and every dispose and recreate was logged at INFO
logging.getLogger(f"{MeteredQueuePool.__module__}.{MeteredQueuePool.__name__}").setLevel(logging.WARNING)


def count_gc() -> None:
    """Count this process's collections in multiprocess mode (GCCollector would show one worker's);
    alone, GCCollector serves them already."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR") and _gc_callback not in gc.callbacks:
        gc.callbacks.append(_gc_callback)


_GC_CHILDREN = [
    (_GC_COLLECTIONS.labels(str(g)), _GC_COLLECTED.labels(str(g)), _GC_UNCOLLECTABLE.labels(str(g))) for g in range(3)
]


def _gc_callback(phase: str, info: dict[str, int]) -> None:
    if phase != "stop":
        return
    collections, collected, uncollectable = _GC_CHILDREN[info["generation"]]
    collections.inc()
    if info["collected"]:
        collected.inc(info["collected"])
    if info["uncollectable"]:
        uncollectable.inc(info["uncollectable"])


class ServerProcesses(Collector):
    """``process_*`` of every live process of this gunicorn server (the master, this worker's parent,
    and its children), one series per ``pid``, read by prometheus-client's ``ProcessCollector``."""

    def collect(self) -> Iterator[Metric]:
        families: dict[str, Metric] = {}
        for pid in _server_pids():
            for family in ProcessCollector(namespace="", pid=lambda pid=pid: pid, registry=None).collect():  # type: ignore[misc]
                merged = families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
                for sample in family.samples:
                    merged.add_sample(sample.name, {**sample.labels, "pid": str(pid)}, sample.value)
        yield from families.values()


def _server_pids() -> list[int]:
    master = os.getppid()
    try:
        with open(f"/proc/{master}/task/{master}/children") as children:
            workers = [int(pid) for pid in children.read().split()]
    except OSError:
        workers = [os.getpid()]
    return [master, *workers]


class ScrapeGauges(Collector):
    """Gauges read together at each scrape: ``query()`` returns ``{metric name: value}`` for the
    names ``documentation`` describes; every sample carries ``labels``."""

    def __init__(self, documentation: dict[str, str], labels: dict[str, str], query: Callable[[], dict[str, float]]):
        self._documentation, self._labels, self._query = documentation, labels, query

    def collect(self) -> Iterable[Metric]:
        try:
            values = self._query()
        except Exception:  # the database away: no samples, and /metrics still answers
            log.warning("metrics not read", extra={"metrics": sorted(self._documentation)}, exc_info=True)
            return []
        families = []
        for name, documentation in self._documentation.items():
            family = GaugeMetricFamily(name, documentation, labels=list(self._labels))
            family.add_metric(list(self._labels.values()), values[name])
            families.append(family)
        return families


def install(service: str, distribution: str | None = None) -> None:
    """A service process's runtime metrics: build info and (multiprocess mode) GC counts. Every
    process of a service calls it (the apps, the workers, the relays: ``dps_build_info`` is declared
    in each, and a label set never given emits no sample); ``distribution`` is the service's own,
    ``dps-<service>`` unless named."""
    set_build_info(service, distribution or f"dps-{service}")
    count_gc()


def add_scrape_collector(name: str, collector: Collector) -> None:
    """Serve ``collector`` on this process's ``/metrics`` (replacing one added under ``name``)."""
    with _lock:
        _SCRAPE_COLLECTORS[name] = collector


def scrape_collectors() -> list[Collector]:
    with _lock:
        return list(_SCRAPE_COLLECTORS.values())
