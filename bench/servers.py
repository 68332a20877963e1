"""The three gunicorn servers of a run, all started with one ``GunicornSettings``, and always stopped."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
HOST = "127.0.0.1"  # traffic stays on loopback
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


WORKER_CLASSES = {"edge": "dps_common.edge.worker.EdgeWorker"}  # production's (dps_common/gunicorn_conf.py)


@dataclass(frozen=True)
class GunicornSettings:
    worker_class: str = "edge"
    workers: int = 2
    threads: int = 4
    keepalive: int = 5
    worker_connections: int = 1000  # per worker; gthread stops accepting at this many open connections

    def args(self) -> list[str]:
        return [
            "--worker-class", WORKER_CLASSES.get(self.worker_class, self.worker_class),
            "--workers", str(self.workers),
            "--threads", str(self.threads),
            "--keep-alive", str(self.keepalive),
            "--worker-connections", str(self.worker_connections),
            "--backlog", "2048",
            "--timeout", "60",
            "--no-control-socket",  # three masters in one run; the default path is shared
        ]

    def describe(self) -> str:
        return (
            f"-k {WORKER_CLASSES.get(self.worker_class, self.worker_class)} --workers {self.workers} "
            + ("" if self.worker_class == "edge" else f"--threads {self.threads} ")
            + f"--keep-alive {self.keepalive} "
            f"--worker-connections {self.worker_connections}"
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def get(port: int, path: str, headers: dict[str, str] | None = None, timeout: float = 10) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


@dataclass(frozen=True)
class GcPauses:
    """The garbage collections of a server's workers within one measurement."""

    count: int
    total_ms: float
    max_ms: float
    full: int  # of them, collections of the oldest generation (the whole heap)
    full_max_ms: float


class Server:
    """One gunicorn master serving ``app_spec``; its own process group so nothing outlives the run.

    ``code``: another work tree whose ``libs/common/src`` and ``services/api/src`` are served instead
    of this one's (a before/after in one run). ``gc_dir``: record the workers' garbage collections
    there (``gc_probe.py``), read with ``gc_pauses`` once the server has stopped."""

    def __init__(self, name: str, app_spec: str, settings: GunicornSettings, env: dict[str, str], log_dir: Path,
                 *, code: Path | None = None, gc_dir: Path | None = None):
        self.name = name
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.log_path = log_dir / f"{name}.log"
        self.gc_dir = gc_dir
        env = dict(env)
        probe: list[str] = []
        if gc_dir is not None:
            gc_dir.mkdir(parents=True, exist_ok=True)
            env["BENCH_GC_DIR"] = str(gc_dir)
            probe = ["--config", str(BENCH_DIR / "gc_probe.py")]
        if code is not None:
            paths = [str(code / "libs/common/src"), str(code / "services/api/src")]
            env["PYTHONPATH"] = os.pathsep.join([*paths, *filter(None, [os.environ.get("PYTHONPATH")])])
        command = [
            sys.executable, "-m", "gunicorn", *probe, *settings.args(),
            "--bind", f"{HOST}:{self.port}",
            "--chdir", str(BENCH_DIR),
            "--error-logfile", str(self.log_path),
            app_spec,
        ]
        self._log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            command, env={**os.environ, **env}, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_ready(self, path: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start; see {self.log_path}")
            try:
                status, _ = get(self.port, path, timeout=2)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} not ready after {timeout:.0f} s; see {self.log_path}")

    def worker_pids(self) -> list[int]:
        pid = self.process.pid
        try:
            return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            return []

    def worker_cpu_seconds(self) -> list[float]:
        """User + system CPU of each worker so far (clock ticks of /proc/<pid>/stat)."""
        seconds = []
        for pid in self.worker_pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            seconds.append((int(fields[11]) + int(fields[12])) / CLOCK_TICKS)  # utime, stime
        return seconds

    def cpu_seconds(self) -> float:
        return sum(self.worker_cpu_seconds())

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            except ProcessLookupError:
                pass
        self._log.close()

    def gc_pauses(self, window_ns: tuple[int, int]) -> GcPauses | None:
        """The workers' collections that began within ``window_ns`` (after ``stop``)."""
        if self.gc_dir is None:
            return None
        began, ended = window_ns
        durations: list[tuple[int, int]] = []
        for path in self.gc_dir.glob("*.gc"):
            for line in path.read_text().splitlines():
                start, duration, generation = (int(x) for x in line.split())
                if began <= start < ended:
                    durations.append((duration, generation))
        full = [d for d, g in durations if g == 2]
        return GcPauses(len(durations), sum(d for d, _ in durations) / 1e6, max((d for d, _ in durations), default=0) / 1e6,
                        len(full), max(full, default=0) / 1e6)


def rss_mb(pid: int) -> float:
    """Resident set size of one process (VmRSS), in MB (10^6 bytes)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 1e6
    raise RuntimeError(f"no VmRSS for {pid}")
