"""Recovering an endpoint's failed deliveries after an outage (``POST /webhook-configs/{id}/recover``):
the form's times, read as UTC, and its answer in words."""

from __future__ import annotations

from datetime import UTC, datetime

RETENTION_DAYS = 30  # the dispatcher keeps 30 days of delivery history (spec); it checks the window itself


def form_time(value: str) -> datetime | None:
    """A time from the form's ``datetime-local`` field (``2027-01-02T10:00`` or with seconds), in UTC;
    an offset or ``Z`` is honoured. None when blank or not a time."""
    text = value.strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace(" ", "T", 1))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def field_value(moment: datetime) -> str:
    """The value a ``datetime-local`` field shows for ``moment`` (UTC, to the second)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def recovered_words(recovered: int, has_more: bool) -> str:
    if recovered == 0 and not has_more:
        return ("No failed delivery to send again in that time: none gave up then, or they were recovered or "
                "retried already.")
    count = f"{recovered:,} deliver{'y' if recovered == 1 else 'ies'}"
    said = f"{count} will be sent again, oldest first, spread out so your receiver is not flooded."
    if has_more:
        said += " More failed deliveries remain in that time: continue below to send them too."
    return said
