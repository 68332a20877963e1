"""What a write use case returns: the view after the change, with the events it recorded about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class RecordedEvents:
    """Events written to the outbox about one subject: their types, and their data, the subject as
    the outbox adapter rendered it (as its own GET renders it). Callers must not change ``data``."""

    types: tuple[str, ...]
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Change(Generic[V]):
    view: V
    events: RecordedEvents | None  # None: nothing changed, nothing recorded
