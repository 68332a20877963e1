"""The event types a service publishes, each with the schema of its ``data``: the catalogue behind
the ``webhooks`` section of the OpenAPI document, and the check that nothing else is published."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from pydantic import BaseModel


class UnknownEventType(ValueError):
    """A programming error: an event written that its service does not declare (and document)."""


@dataclass(frozen=True)
class EventType:
    name: str
    summary: str
    data: type[BaseModel]


class EventCatalogue:
    def __init__(self, events: Iterable[EventType]):
        self._events: dict[str, EventType] = {}
        for event in events:
            if event.name in self._events:
                raise ValueError(f"event type {event.name!r} is declared twice")
            self._events[event.name] = event

    def __iter__(self) -> Iterator[EventType]:
        return iter(self._events.values())

    def __contains__(self, name: object) -> bool:
        return name in self._events

    def __getitem__(self, name: str) -> EventType:
        return self._events[self.declared(name)]

    def declared(self, name: str) -> str:
        """``name``, if the catalogue declares it."""
        if name not in self._events:
            raise UnknownEventType(f"event type {name!r} is not in the catalogue")
        return name
