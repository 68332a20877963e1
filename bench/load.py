"""Runs wrk against one URL and parses the line that wrk_report.lua prints."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

LUA_REPORT = Path(__file__).resolve().parent / "wrk_report.lua"


@dataclass(frozen=True)
class LoadOptions:
    duration: int = 10  # seconds measured per target
    warmup: int = 3  # seconds of load thrown away before each measurement
    connections: int = 16
    threads: int = 1  # wrk threads; one is plenty on loopback and leaves a core to the servers


@dataclass(frozen=True)
class LoadResult:
    requests: int
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    errors: dict[str, int]
    cpu_us: float = 0.0  # server CPU (user + system, all workers) per request: robust to a busy machine
    window_ns: tuple[int, int] = (0, 0)  # time.monotonic_ns() when the measured load began and ended

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


def require_wrk() -> str:
    path = shutil.which("wrk")
    if path is None:
        raise SystemExit("wrk is not installed: apt-get install -y wrk (Debian package)")
    return path


def run_wrk(url: str, seconds: int, options: LoadOptions, headers: dict[str, str] | None = None) -> LoadResult:
    command = [
        require_wrk(),
        "--threads", str(options.threads),
        "--connections", str(options.connections),
        "--duration", f"{seconds}s",
        "--timeout", "10s",
        "--script", str(LUA_REPORT),
    ]
    for name, value in (headers or {}).items():
        command += ["--header", f"{name}: {value}"]
    command.append(url)
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60, check=True)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            data = json.loads(line.removeprefix("BENCH_RESULT "))
            return LoadResult(
                data["requests"], data["rps"], data["p50_ms"], data["p90_ms"], data["p99_ms"], data["max_ms"], data["errors"]
            )
    raise RuntimeError(f"wrk printed no result for {url}:\n{done.stdout}\n{done.stderr}")


def measure(
    url: str, options: LoadOptions, headers: dict[str, str] | None, cpu_seconds: Callable[[], float]
) -> LoadResult:
    """Warm up, then measure; a run with any failed or non-2xx/3xx response is an error, not a number."""
    if options.warmup > 0:
        run_wrk(url, options.warmup, options, headers)
    cpu_before, began = cpu_seconds(), time.monotonic_ns()
    result = run_wrk(url, options.duration, options, headers)
    ended, cpu = time.monotonic_ns(), cpu_seconds() - cpu_before
    if result.error_count:
        raise RuntimeError(f"{url}: wrk reported errors {result.errors}")
    return replace(result, cpu_us=cpu / max(result.requests, 1) * 1e6, window_ns=(began, ended))
