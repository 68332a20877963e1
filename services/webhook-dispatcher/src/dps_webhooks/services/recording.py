"""Recording finished attempts: a batch of outcomes in one transaction, with a few set-wise statements.

The worker hands every result that is ready to ``record_outcomes`` at once, so a busy worker pays one
commit (one fsync) for many deliveries and an idle one still records each result as soon as it is in.

Lock order: the batch's endpoint rows first, by id, then their deliveries: the order of pausing and
disabling (endpoint, then its deliveries), so recording never deadlocks with them or with another
worker, and a pause that commits first is seen here. Several outcomes for one endpoint are applied
in the order they finished by ``endpoint_after`` (the domain's rules): the failure count and the
disabling come out exactly as if each had been recorded in a transaction of its own.

Only the holder of a delivery's current claim token records its outcome: a row taken over by another
worker (its lease ran out) or deleted is left alone, and its result is reported as not recorded.

A claim past the last allowed attempt (taking over a delivery whose 8th attempt was cut short: every
claim counts one, ``db/deliveries.py``) sends nothing: ``interrupted_last`` records that 8th attempt,
started and never answered as far as anyone knows, and the delivery EXHAUSTED.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import (
    BigInteger,
    Date,
    Integer,
    Interval,
    String,
    Text,
    Uuid,
    and_,
    bindparam,
    case,
    false,
    func,
    insert,
    literal_column,
    not_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session
from sqlalchemy.types import TypeEngine

from dps_common.ids import new_id

from dps_webhooks.adapters import metrics
from dps_webhooks.db.arrays import unnested
from dps_webhooks.db.deliveries import hold_pending, notify_due
from dps_webhooks.db.models import DeliveryAttempt, EndpointHour, WebhookDelivery, WebhookEndpoint
from dps_webhooks.db.partitions import day_of
from dps_webhooks.domain.attempt_outcome import (
    AttemptResult,
    DeliveryStatus,
    EndpointEffect,
    Outcome,
    endpoint_after,
)
from dps_webhooks.domain.claims import Claimed

log = logging.getLogger("dps.webhooks.recording")

Delivery, Endpoint, Attempt = WebhookDelivery, WebhookEndpoint, DeliveryAttempt


@dataclass(frozen=True)
class Finished:
    """One attempt made under a claim, and what it means."""

    claimed: Claimed
    result: AttemptResult
    outcome: Outcome


INTERRUPTED = (
    "The attempt was interrupted: the worker making it stopped before its result was known. "
    "It counts as a failed attempt, the last one allowed."
)


def interrupted_last(claimed: Claimed, max_attempts: int) -> Finished | None:
    """The outcome to record, without sending, of a claim past ``max_attempts``; None for any other."""
    if claimed.attempt <= max_attempts:
        return None
    return Finished(
        replace(claimed, attempt=max_attempts),  # the delivery's count goes back to it when recorded
        AttemptResult(None, None, INTERRUPTED, 0),
        Outcome(DeliveryStatus.EXHAUSTED, None, EndpointEffect.COUNT_FAILURE),
    )


class LeaseLost(Exception):
    """The delivery was taken up by another worker (or deleted) before this outcome was recorded."""


def record_outcome(
    session: Session,
    claimed: Claimed,
    result: AttemptResult,
    outcome: Outcome,
    *,
    disable_after: int,
    wake_within_seconds: float = 0.0,
) -> None:
    """One outcome; raises ``LeaseLost`` (roll back) when the claim is no longer this worker's."""
    finished = Finished(claimed, result, outcome)
    if not record_outcomes(session, [finished], disable_after=disable_after, wake_within_seconds=wake_within_seconds):
        raise LeaseLost(str(claimed.delivery_id))


def record_outcomes(
    session: Session, batch: Sequence[Finished], *, disable_after: int, wake_within_seconds: float = 0.0
) -> list[Finished]:
    """The attempt rows, the deliveries' states and the endpoints' failure counts; the outcomes
    recorded (the others' claims were lost).

    A delivery moves from PENDING to FAILED when its first failed attempt is recorded, and stays
    FAILED (also while a retry is in flight) until SUCCESS or EXHAUSTED. ``lastErrorMessage``
    describes the last attempt: NULL after a success. A failed attempt is retried only while its
    endpoint takes deliveries; otherwise it is held (resuming releases it).
    """
    if not batch:
        return []
    statuses = _apply_endpoint_effects(session, batch, disable_after)
    columns: dict[str, list[object]] = {name: [] for name in _OUTCOME_COLUMNS}
    wake = False
    for finished in batch:
        claimed, result, outcome = finished.claimed, finished.result, finished.outcome
        retry_in = None
        if outcome.status is DeliveryStatus.FAILED and _sendable_to(statuses.get(claimed.endpoint_id), claimed.is_test):
            assert outcome.retry_in_seconds is not None
            retry_in = timedelta(seconds=outcome.retry_in_seconds)
            wake = wake or outcome.retry_in_seconds <= wake_within_seconds
        for name, value in (
            ("delivery", claimed.delivery_id),
            ("token", claimed.token),
            ("attempt_id", new_id()),
            ("attempt_number", claimed.attempt),
            ("new_status", outcome.status.value),
            ("retry_in", retry_in),
            ("answered", result.status),
            ("excerpt", result.excerpt),
            ("error", result.error_message),
            ("took_ms", result.duration_ms),
            ("signed_at", result.webhook_timestamp),
            ("signature", result.webhook_signature),
            ("delivery_day", day_of(claimed.delivery_id)),
        ):
            columns[name].append(value)
    recorded_ids = set(session.connection().execute(_RECORD, columns).scalars())
    recorded = [finished for finished in batch if finished.claimed.delivery_id in recorded_ids]
    if wake:
        notify_due(session)  # sooner than the workers would poll
    return recorded


def _sendable_to(endpoint_status: str | None, is_test: bool) -> bool:
    return endpoint_status == "ACTIVE" or (is_test and endpoint_status == "PAUSED")


def _apply_endpoint_effects(session: Session, batch: Sequence[Finished], disable_after: int) -> dict[UUID, str]:
    """Lock the batch's endpoints (by id), apply their outcomes in order; their statuses after."""
    effects: dict[UUID, list[EndpointEffect]] = {}
    for finished in batch:
        effects.setdefault(finished.claimed.endpoint_id, []).append(finished.outcome.endpoint)
    locked = session.connection().execute(_LOCK_ENDPOINTS, {"ids": sorted(effects)}).all()
    statuses = {}
    for endpoint_id, status, failures in locked:  # a deleted endpoint's deliveries are gone too
        after = endpoint_after(status, failures, effects[endpoint_id], disable_after)
        statuses[endpoint_id] = after.status
        if after.disabled_reason is not None:
            session.execute(
                update(Endpoint)
                .where(Endpoint.id == endpoint_id)
                .values(
                    consecutive_failures=after.consecutive_failures,
                    status=after.status,
                    disabled_reason=after.disabled_reason,
                    updated_at=func.now(),
                )
            )
            hold_pending(session, endpoint_id, keep_tests=False)
            # Counted where it is decided, like the log line: if the transaction then fails, the attempt
            # is made and recorded again later and may count twice (rare; not worth carrying to the commit).
            metrics.ENDPOINTS_DISABLED.inc()
            log.warning(
                "endpoint disabled",
                extra={"endpointId": str(endpoint_id), "consecutiveFailures": after.consecutive_failures},
            )
        elif after.consecutive_failures != failures:  # successes to a healthy endpoint write nothing
            session.execute(
                update(Endpoint).where(Endpoint.id == endpoint_id).values(consecutive_failures=after.consecutive_failures)
            )
    return statuses


# Built once: building the statements costs more than running them on this hot path.
_LOCK_ENDPOINTS = (
    select(Endpoint.id, Endpoint.status, Endpoint.consecutive_failures)
    .where(Endpoint.id == func.any(bindparam("ids", type_=ARRAY(Uuid()))))
    .order_by(Endpoint.id)
    .with_for_update(key_share=True)  # FOR NO KEY UPDATE: the lock pausing takes
)

_OUTCOME_COLUMNS: dict[str, TypeEngine[Any]] = {
    "delivery": Uuid(),
    "token": Uuid(),
    "attempt_id": Uuid(),
    "attempt_number": Integer(),
    "new_status": String(),
    "retry_in": Interval(),
    "answered": Integer(),
    "excerpt": Text(),
    "error": Text(),
    "took_ms": Integer(),
    "signed_at": BigInteger(),
    "signature": Text(),
    "delivery_day": Date(),  # the delivery's (its id's) day: the counts of a day go with its partitions
}


# One statement: the deliveries still claimed under their tokens are updated, and exactly those get
# their attempt rows (a data-modifying CTE).
_OUTCOMES = unnested("outcome", _OUTCOME_COLUMNS)
# by the database clock
_ATTEMPTED_AT = func.now() - _OUTCOMES.c.took_ms * literal_column("interval '1 millisecond'", Interval())
_FINAL = (literal_column("'SUCCESS'", String()), literal_column("'EXHAUSTED'", String()))
_UPDATED = (
    update(Delivery)
    .where(Delivery.id == _OUTCOMES.c.delivery, Delivery.claim_token == _OUTCOMES.c.token)
    .values(
        status=_OUTCOMES.c.new_status,
        attempt_count=_OUTCOMES.c.attempt_number,  # the claim's count, except after an interrupted last attempt
        next_attempt_at=func.now() + _OUTCOMES.c.retry_in,  # NULL: none scheduled
        claim_token=None,
        last_response_status=_OUTCOMES.c.answered,
        last_response_excerpt=_OUTCOMES.c.excerpt,
        last_error_message=_OUTCOMES.c.error,
        last_duration_ms=_OUTCOMES.c.took_ms,
        last_attempted_at=_ATTEMPTED_AT,
        completed_at=case((_OUTCOMES.c.new_status.in_(_FINAL), func.now()), else_=None),
    )
    .returning(
        _OUTCOMES.c.attempt_id,
        Delivery.id.label("delivery"),
        Delivery.endpoint_id,  # on the attempt too: the endpoint's hourly counts are kept by it
        _OUTCOMES.c.attempt_number,
        Delivery.last_attempted_at,
        _OUTCOMES.c.answered,
        _OUTCOMES.c.excerpt,
        _OUTCOMES.c.error,
        _OUTCOMES.c.took_ms,
        _OUTCOMES.c.signed_at,
        _OUTCOMES.c.signature,
        _OUTCOMES.c.delivery_day,
    )
    .cte("recorded")
)
_RECORD_ATTEMPTS = (
    insert(Attempt)
    .from_select(
        [
            Attempt.id,
            Attempt.delivery_id,
            Attempt.endpoint_id,
            Attempt.attempt,
            Attempt.attempted_at,
            Attempt.response_status,
            Attempt.response_excerpt,
            Attempt.error_message,
            Attempt.duration_ms,
            Attempt.webhook_timestamp,
            Attempt.webhook_signature,
        ],
        select(*(column for column in _UPDATED.c if column.name != "delivery_day")),
    )
    .returning(Attempt.delivery_id)
)
# The attempts just recorded, counted into their endpoint's hour (db/models/endpoint_hours.py) in the
# same statement: no trigger, no round trip (a statement trigger doing it cost the backend 170-210 µs a
# batch, bench/endpoint_stats.py).
_SUCCEEDED = and_(func.coalesce(_UPDATED.c.answered.between(200, 299), false()), _UPDATED.c.error.is_(None))
# the UTC hour, as date_trunc('hour', ..., 'UTC') gives it, by plain arithmetic (no time zone looked up)
_HOUR = func.date_bin(
    literal_column("interval '1 hour'"), _UPDATED.c.last_attempted_at, literal_column("timestamptz '1970-01-01Z'")
)
_NEW_COUNTS = pg_insert(EndpointHour).from_select(
    [EndpointHour.endpoint_id, EndpointHour.hour, EndpointHour.delivery_day, EndpointHour.succeeded, EndpointHour.failed],
    select(
        _UPDATED.c.endpoint_id,
        _HOUR,
        _UPDATED.c.delivery_day,
        func.count().filter(_SUCCEEDED),
        func.count().filter(not_(_SUCCEEDED)),
    )
    .group_by(_UPDATED.c.endpoint_id, _HOUR, _UPDATED.c.delivery_day)
    # the hour rows locked in one order by every worker: two batches over the same endpoints wait for
    # each other instead of deadlocking
    .order_by(_UPDATED.c.endpoint_id, _HOUR, _UPDATED.c.delivery_day),
)
_COUNTED = _NEW_COUNTS.on_conflict_do_update(
    index_elements=[EndpointHour.endpoint_id, EndpointHour.hour, EndpointHour.delivery_day],
    set_={
        "succeeded": EndpointHour.succeeded + _NEW_COUNTS.excluded.succeeded,
        "failed": EndpointHour.failed + _NEW_COUNTS.excluded.failed,
    },
).cte("counted")
_RECORD = _RECORD_ATTEMPTS.add_cte(_COUNTED)
