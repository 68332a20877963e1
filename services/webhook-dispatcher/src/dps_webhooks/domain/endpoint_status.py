"""Webhook endpoint status rules (spec section 3), as plain functions over plain values.

A caller moves an endpoint between ``ACTIVE`` and ``PAUSED`` and re-enables a ``DISABLED`` one by
setting ``ACTIVE``; only the dispatcher disables (20 consecutive failures) and only ``DELETE``
revokes. A revoked endpoint is ``DISABLED`` for good, like a revoked API key: nothing about it can
change any more, so a receiver whose URL was handed over cannot be brought back to life by mistake.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from dps_common.errors import Conflict

REVOKED_REASON = "Revoked."


class EndpointStatus(StrEnum):
    ACTIVE = "ACTIVE"
    PAUSED = "PAUSED"
    DISABLED = "DISABLED"


@dataclass(frozen=True)
class StatusChange:
    """What setting a status does: the status to store and the side effects that go with it."""

    status: EndpointStatus
    reset_failures: bool = False  # consecutiveFailures to 0 and disabledReason cleared
    hold_pending: bool = False  # unschedule waiting deliveries (test deliveries stay due)
    release_held: bool = False  # schedule held deliveries now


def revoked_conflict() -> Conflict:
    return Conflict(
        "This webhook config was revoked; it cannot be changed or used again. Create a new one.",
        code="webhook_config_revoked",
    )


def ensure_not_revoked(revoked: bool) -> None:
    if revoked:
        raise revoked_conflict()


def change_status(current: EndpointStatus, requested: EndpointStatus | None, *, revoked: bool) -> StatusChange:
    """The change a ``PUT`` asking for ``requested`` makes (None: the status is left as it is).

    Setting ``ACTIVE`` always clears the failure count and the reason, whatever the status was, and
    releases whatever was held. ``DISABLED`` cannot be set (revoke with ``DELETE``); asking for it
    on an endpoint that is already disabled changes nothing, so a record read and sent back whole
    is accepted. ``DISABLED`` to ``PAUSED`` is refused: re-enable first.
    """
    ensure_not_revoked(revoked)
    if requested is EndpointStatus.ACTIVE:
        return StatusChange(EndpointStatus.ACTIVE, reset_failures=True, release_held=True)
    if requested is None or requested == current:
        return StatusChange(current)
    if requested is EndpointStatus.PAUSED:
        if current is EndpointStatus.DISABLED:
            raise Conflict(
                "A DISABLED webhook config cannot be paused; set status ACTIVE to re-enable it first.",
                code="invalid_status_transition",
            )
        return StatusChange(EndpointStatus.PAUSED, hold_pending=True)
    raise Conflict(
        f"Status DISABLED cannot be set from {current}; revoke the webhook config with DELETE instead, "
        "or pause it with status PAUSED.",
        code="invalid_status_transition",
    )


def new_delivery_held(status: EndpointStatus, *, revoked: bool, is_test: bool) -> bool:
    """Whether a delivery made now by a caller (a test delivery, a manual retry) waits for the
    endpoint to resume. Test deliveries are sent even when ``PAUSED`` (spec section 6, rule 7); a
    ``DISABLED`` endpoint receives nothing."""
    ensure_not_revoked(revoked)
    if status is EndpointStatus.DISABLED:
        raise Conflict(
            "This webhook config is DISABLED; set its status to ACTIVE before sending to it.",
            code="webhook_config_disabled",
        )
    return status is EndpointStatus.PAUSED and not is_test
