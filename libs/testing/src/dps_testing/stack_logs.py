"""Where the processes of a black-box stack write their output, and the search of every line of it.

``StackLogs(folder)`` hands out one file per process (``path("api")``: stdout and stderr of a
gunicorn, a worker, a relay go there) and copies the log records of servers that run inside the
test process (the billing platform stand-in, the webhook receiver) to a file of their own
(``capture``). ``scan_logs(logs.files(), secrets)`` then reads every line of every file and names
each line that holds a secret: the file, the line number and the secret's label, never the secret."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from dps_testing.secret_matcher import SecretMatcher


class StackLogs:
    def __init__(self, folder: Path):
        self.folder = folder
        self._lock = threading.Lock()
        folder.mkdir(parents=True, exist_ok=True)

    def path(self, process: str) -> Path:
        """A new file for ``process`` (a second process of that name gets ``name-2.log``)."""
        slug = re.sub(r"[^a-z0-9]+", "-", process.lower()).strip("-") or "process"
        with self._lock:
            for n in range(1, 1000):
                candidate = self.folder / (f"{slug}.log" if n == 1 else f"{slug}-{n}.log")
                if not candidate.exists():
                    candidate.touch()
                    return candidate
        raise RuntimeError(f"too many logs named {slug}")

    @contextmanager
    def capture(self, process: str, *loggers: str, level: int = logging.INFO) -> Iterator[Path]:
        """While inside, the records of ``loggers`` (at ``level`` and up) are written to ``process``'s
        file as lines, as the same server run as a process would print them."""
        path = self.path(process)
        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        handler.setLevel(level)
        attached = [logging.getLogger(name) for name in loggers]
        levels = [logger.level for logger in attached]
        for logger in attached:
            logger.addHandler(handler)
            if logger.level == logging.NOTSET or logger.level > level:
                logger.setLevel(level)
        try:
            yield path
        finally:
            for logger, old in zip(attached, levels, strict=True):
                logger.removeHandler(handler)
                logger.setLevel(old)
            handler.close()

    def files(self) -> list[Path]:
        return sorted(self.folder.glob("*.log"))


@dataclass(frozen=True, slots=True)
class LogFinding:
    file: str
    line: int
    secret: str  # the secret's label, never the secret


@dataclass
class LogScanReport:
    files: dict[str, int] = field(default_factory=dict)  # file name -> lines read
    secrets: int = 0
    found: list[LogFinding] = field(default_factory=list)

    @property
    def lines(self) -> int:
        return sum(self.files.values())

    def summary(self) -> str:
        return (f"{len(self.files)} log files, {self.lines} lines scanned for {self.secrets} secrets: "
                f"{len(self.found)} found")


def scan_logs(files: Sequence[Path], secrets: Mapping[str, str]) -> LogScanReport:
    """Every line of ``files`` searched for each of ``secrets`` (label -> secret), bytes as written
    (a line need not be UTF-8)."""
    matcher = SecretMatcher(secrets)
    report = LogScanReport(secrets=len(secrets))
    for path in files:
        count = 0
        with open(path, "rb") as log:
            for count, line in enumerate(log, 1):
                report.found.extend(LogFinding(path.name, count, label) for label in matcher.in_bytes(line))
        report.files[path.name] = count
    return report
