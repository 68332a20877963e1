"""What recording an event gives back to its use case: the type, and the data the outbox adapter
rendered from the subject (the view after the change) and wrote."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """Callers must not change ``data``: it is what the outbox holds."""

    type: str
    data: dict[str, Any]
