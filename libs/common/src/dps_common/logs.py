"""JSON logs: one object per line, constant messages, identifiers as fields.

Every line carries ``time`` in ISO 8601 UTC with milliseconds (``2026-11-24T10:11:12.345Z``), whatever
the host's time zone, so lines of several processes and machines sort and compare as they are.
gunicorn's ``logconfig_dict`` (``dps_common.gunicorn_conf``) uses the same formatter.

Every line also names the process that wrote it: ``service`` (``api``, ``webhook-dispatcher``,
``billing-connector``, ``console``) and ``process`` (``http``, ``outbox-relay``, ``event-consumer``
and ``delivery-worker`` (the dispatcher's worker process), ``push-worker``, ``cli``), set once per
process by ``configure`` (or ``identify``). A line written while a request id is bound
(``dps_common.request_id``: an HTTP request, or an event being handled) carries it as ``requestId``,
unless the line names one itself.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from pythonjsonlogger.json import JsonFormatter

from dps_common import request_id

_IDENTITY: dict[str, str] = {}  # service, process: this process's, on every line
_KIND: ContextVar[str | None] = ContextVar("dps_process_kind", default=None)  # a thread's own kind


class JsonLineFormatter(JsonFormatter):
    """python-json-logger's formatter with the fields every line has: time, level, logger, message."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            "{asctime}{levelname}{name}{message}",
            style="{",
            rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
            **kwargs,
        )

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """ISO 8601 in UTC to the millisecond, ``2026-11-24T10:11:12.345Z`` (never local time)."""
        moment = datetime.fromtimestamp(record.created, UTC)
        return moment.isoformat(timespec="milliseconds").removesuffix("+00:00") + "Z"

    def add_fields(self, log_record: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]) -> None:
        super().add_fields(log_record, record, message_dict)
        for field, value in _IDENTITY.items():
            log_record.setdefault(field, value)
        kind = _KIND.get()
        if kind is not None:
            log_record["process"] = kind
        if "requestId" not in log_record:
            current = request_id.current()
            if current is not None:
                log_record["requestId"] = current


def identify(service: str, process: str) -> None:
    """Name this process on every line it writes from now on (gunicorn's own lines too)."""
    _IDENTITY.clear()
    _IDENTITY.update(service=service, process=process)


@contextmanager
def kind(process: str) -> Iterator[None]:
    """Lines written in this block (this thread) name ``process`` as their kind: a process that runs
    two kinds of work on threads (the dispatcher's worker: its event consumer beside the deliveries)."""
    token = _KIND.set(process)
    try:
        yield
    finally:
        _KIND.reset(token)


def configure(level: str = "INFO", *, service: str, process: str) -> None:
    identify(service, process)
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
