"""JSON logs: one object per line, constant messages, identifiers as fields.

Every line carries ``time`` in ISO 8601 UTC with milliseconds (``2026-11-24T10:11:12.345Z``), whatever
the host's time zone, so lines of several processes and machines sort and compare as they are.
gunicorn's ``logconfig_dict`` (``dps_common.gunicorn_conf``) uses the same formatter.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime
from typing import Any

from pythonjsonlogger.json import JsonFormatter


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


def configure(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
