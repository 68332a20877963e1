"""The message headers the relay publishes with an outbox row: ``X-Request-Id``, the id of the
request that recorded the event (``dps_common.request_id``), so a consumer logs its work under the
id the request was logged under. Not in the envelope: its fields are the spec's."""

from __future__ import annotations

from dps_common.request_id import HEADER

REQUEST_ID_HEADER = HEADER


def message_headers(request_id: str | None) -> dict[str, str] | None:
    """The headers of a row's message; None when it has none (an event no request caused)."""
    return {REQUEST_ID_HEADER: request_id} if request_id else None


def request_id_of(headers: object) -> str | None:
    """A received message's request id (its ``X-Request-Id`` header), or None."""
    if not isinstance(headers, dict):
        return None
    value = headers.get(REQUEST_ID_HEADER)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return value if isinstance(value, str) and value else None
