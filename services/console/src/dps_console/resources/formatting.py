"""How pages write times, counts and a delivery's progress: the Jinja filters ``moment`` (a time to
the second, in UTC, in a ``<time datetime>`` element, and how long ago or how soon), ``counted``
("1 product", "2 prices") and ``delivery_progress`` (the spec's FAILED and EXHAUSTED in words: which
attempt of 8, when the next one goes, or that it was given up).

Things happen within a minute here (a delivery's attempts, a push), so a time to the minute says too
little: four attempts read "12:41 UTC"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment
from markupsafe import Markup, escape

# Spec section 6, delivery rule 4: up to 8 attempts, then EXHAUSTED. The dispatcher answers how many
# were made (attemptCount), not how many it allows.
MAX_ATTEMPTS = 8

_UNITS = ((86400, "day", "days"), (3600, "h", "h"), (60, "min", "min"), (1, "s", "s"))


def parse_time(value: object) -> datetime | None:
    """A time as the services answer it (ISO 8601, ``Z`` or an offset; naive is read as UTC)."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
    else:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def relative(moment: datetime, now: datetime) -> str:
    """``5 s ago``, ``3 min ago``, ``in 25 s``; ``just now`` within a second. Whole units, rounded down."""
    seconds = int((now - moment).total_seconds())
    if seconds == 0:
        return "just now"
    span = abs(seconds)
    for size, one, many in _UNITS:
        if span >= size:
            amount = span // size
            text = f"{amount} {one if amount == 1 else many}"
            return f"{text} ago" if seconds > 0 else f"in {text}"
    return "just now"  # pragma: no cover (span >= 1 always matches the seconds unit)


def moment_html(value: object, now: datetime, *, never: str = "never") -> Markup:
    moment = parse_time(value)
    if moment is None:
        return Markup(escape(never))
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    shown = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return Markup('<time datetime="{}">{}</time> <span class="ago">({})</span>').format(
        stamp, shown, relative(moment, now))


def counted(amount: object, singular: str, plural: str | None = None) -> str:
    """``1 product``, ``0 products``, ``2 prices`` (``plural`` when adding an s is wrong)."""
    number = amount if isinstance(amount, int) else 0
    return f"{number} {singular if number == 1 else (plural or singular + 's')}"


def delivery_progress(delivery: Mapping[str, Any], now: datetime) -> Markup:
    """What a delivery's status means for the person reading it (spec section 3, Webhook delivery)."""
    status = delivery.get("status")
    count = delivery.get("attemptCount")
    made = count if isinstance(count, int) else 0
    next_at = delivery.get("nextAttemptAt")
    if status == "SUCCESS":
        return Markup("Delivered on attempt {} of {}.").format(made, MAX_ATTEMPTS)
    if status == "EXHAUSTED":
        if not made:
            return Markup("Given up: the payload could not be delivered (over 1 MB). It is never retried.")
        return Markup("Given up after {}: it is never retried automatically. Retry it by hand.").format(
            counted(made, "attempt"))
    if status == "FAILED":  # also while a retry is in flight: the claim already counts it as made
        said = Markup("Failed, retries remain: {} of {} attempts made.").format(made, MAX_ATTEMPTS)
        return said + " " + _next(next_at, now)
    if status == "PENDING":
        if not made:
            return Markup("Queued: the first attempt goes out shortly.")
        return Markup("Attempt {} of {} is under way.").format(made, MAX_ATTEMPTS)
    return Markup("")


def _next(next_at: object, now: datetime) -> Markup:
    if parse_time(next_at) is None:
        return Markup("The next attempt is held while the endpoint is paused or disabled.")
    return Markup("The next attempt goes at {}.").format(moment_html(next_at, now))


def type_anchor(event_type: object) -> str:
    """The catalogue's anchor of an event type: ``quote.approved`` -> ``type-quote-approved``."""
    text = str(event_type)
    return "type-" + "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "-" for c in text)


def install(env: Environment, now: Callable[[], datetime]) -> None:
    """The filters, each reading the clock when the page is rendered."""
    env.filters["moment"] = lambda value, never="never": moment_html(value, now(), never=never)
    env.filters["counted"] = counted
    env.filters["type_anchor"] = type_anchor
    env.globals["max_attempts"] = MAX_ATTEMPTS
    env.filters["delivery_progress"] = lambda delivery: delivery_progress(delivery, now())
