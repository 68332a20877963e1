"""The webhook bench's machine and versions, for the results file."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from datetime import datetime
from pathlib import Path

from databases import server_version

PACKAGES = ("gunicorn", "kombu", "requests", "urllib3", "psycopg", "SQLAlchemy", "orjson")


def machine(server_url: str) -> dict[str, str]:
    cpu = next(
        (line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
        "unknown",
    )
    mem_kb = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
    return {
        "date": datetime.now().astimezone().isoformat(timespec="seconds"),
        "cores (nproc)": str(os.cpu_count()),
        "cpu": cpu,
        "memory": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "kernel": platform.release(),
        "python": platform.python_version(),
        "postgres": server_version(server_url),
        "rabbitmq": _rabbitmq_version(),
    }


def versions() -> str:
    return ", ".join(f"{name} {importlib.metadata.version(name)}" for name in PACKAGES)


def _rabbitmq_version() -> str:
    try:
        out = subprocess.run(["rabbitmqctl", "version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out or "unknown"
