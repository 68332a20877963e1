"""A process's log lines as it writes them (``dps_common.logs.JsonLineFormatter``), caught in the test's
own process: ``with json_lines("dps.billing.worker") as lines: ... lines.about(pushId=push_id)``.

Each line is formatted on the thread that logs it, where the bound request id and the other context
are, not later on the test's thread."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from dps_common.logs import JsonLineFormatter


class JsonLines(logging.Handler):
    """The JSON objects of the lines logged through the logger it is added to."""

    def __init__(self, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.setFormatter(JsonLineFormatter())
        self._lines: list[dict[str, Any]] = []
        self._lines_lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        line = json.loads(self.format(record))
        with self._lines_lock:
            self._lines.append(line)

    @property
    def lines(self) -> list[dict[str, Any]]:
        with self._lines_lock:
            return list(self._lines)

    def about(self, **fields: object) -> list[dict[str, Any]]:
        """The lines holding each of ``fields`` with that value, e.g. ``about(deliveryId=...)``."""
        return [line for line in self.lines if all(line.get(name) == value for name, value in fields.items())]


@contextmanager
def json_lines(logger_name: str, level: int = logging.INFO) -> Iterator[JsonLines]:
    """The lines of ``logger_name`` (and the loggers below it) at ``level`` and above while inside;
    the logger's own level is set for that time, then put back."""
    logger = logging.getLogger(logger_name)
    handler, before = JsonLines(level), logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)
