"""The customer event catalogue the dispatcher owns: every event type the services publish to
webhook endpoints (the api's product.*, quote.*, approval.*, ... and the connector's billing.*),
each with its description, the JSON schema of the payload an endpoint receives and an example.

The catalogue is data (``event_types.json`` beside this module): the dispatcher imports no other
service's code, so it keeps this copy of what they document in their OpenAPI ``webhooks``; a
contract test compares it with what the api and the connector publish. ``internal.*`` events are
never delivered and ``webhook.test`` is sent whatever an endpoint subscribes to: neither is here.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from importlib.resources import files
from typing import Any


@cache
def catalogue() -> tuple[dict[str, Any], ...]:
    """``{"type", "description", "schema", "example"}`` per event type, by type name."""
    entries = json.loads(files(__package__).joinpath("event_types.json").read_text(encoding="utf-8"))
    return tuple(sorted(entries, key=lambda entry: entry["type"]))


@cache
def known_event_types() -> tuple[str, ...]:
    return tuple(entry["type"] for entry in catalogue())


def closest_event_type(name: str) -> str | None:
    """The known type ``name`` most likely misspells (``quote.aproved`` -> ``quote.approved``)."""
    matches = difflib.get_close_matches(name, known_event_types(), n=1, cutoff=0.75)
    return matches[0] if matches else None


def unknown_event_type_message(name: str) -> str:
    closest = closest_event_type(name)
    hint = f"did you mean {closest!r}?" if closest else "known types: " + ", ".join(known_event_types())
    return f"unknown event type {name!r}: {hint} (GET /webhook-event-types lists them)"
