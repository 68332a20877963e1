"""The endpoint status rules of spec section 3, without I/O: every (current, requested) pair."""

import pytest

from dps_common.errors import Conflict

from dps_webhooks.domain.endpoint_status import (
    EndpointStatus,
    StatusChange,
    change_status,
    ensure_not_revoked,
    new_delivery_held,
)

ACTIVE, PAUSED, DISABLED = EndpointStatus.ACTIVE, EndpointStatus.PAUSED, EndpointStatus.DISABLED
REENABLE = StatusChange(ACTIVE, reset_failures=True, release_held=True)


@pytest.mark.parametrize(
    ("current", "requested", "expected"),
    [
        (ACTIVE, None, StatusChange(ACTIVE)),
        (PAUSED, None, StatusChange(PAUSED)),
        (DISABLED, None, StatusChange(DISABLED)),
        (ACTIVE, PAUSED, StatusChange(PAUSED, hold_pending=True)),
        (PAUSED, ACTIVE, REENABLE),
        (DISABLED, ACTIVE, REENABLE),
        (ACTIVE, ACTIVE, REENABLE),  # setting ACTIVE always clears the failure count and the reason
        (PAUSED, PAUSED, StatusChange(PAUSED)),
        (DISABLED, DISABLED, StatusChange(DISABLED)),  # a record sent back whole changes nothing
    ],
)
def test_allowed_changes_and_their_effects(current, requested, expected):
    assert change_status(current, requested, revoked=False) == expected


@pytest.mark.parametrize(
    ("current", "requested", "words"),
    [
        (DISABLED, PAUSED, "ACTIVE to re-enable"),
        (ACTIVE, DISABLED, "DELETE"),
        (PAUSED, DISABLED, "DELETE"),
    ],
)
def test_refused_changes_are_conflicts_that_say_what_to_do(current, requested, words):
    with pytest.raises(Conflict) as refused:
        change_status(current, requested, revoked=False)
    assert refused.value.code == "invalid_status_transition"
    assert words in refused.value.detail


@pytest.mark.parametrize("requested", [None, ACTIVE, PAUSED, DISABLED])
def test_a_revoked_endpoint_cannot_change_at_all(requested):
    with pytest.raises(Conflict) as refused:
        change_status(DISABLED, requested, revoked=True)
    assert refused.value.code == "webhook_config_revoked"


def test_ensure_not_revoked():
    ensure_not_revoked(False)
    with pytest.raises(Conflict) as refused:
        ensure_not_revoked(True)
    assert refused.value.code == "webhook_config_revoked"


@pytest.mark.parametrize(
    ("status", "is_test", "held"),
    [
        (ACTIVE, False, False),
        (ACTIVE, True, False),
        (PAUSED, True, False),  # test deliveries are sent even when PAUSED
        (PAUSED, False, True),  # a manual retry waits for the resume
    ],
)
def test_new_deliveries_are_due_or_held(status, is_test, held):
    assert new_delivery_held(status, revoked=False, is_test=is_test) is held


@pytest.mark.parametrize("is_test", [False, True])
def test_no_new_delivery_to_a_disabled_or_revoked_endpoint(is_test):
    with pytest.raises(Conflict) as disabled:
        new_delivery_held(DISABLED, revoked=False, is_test=is_test)
    assert disabled.value.code == "webhook_config_disabled"
    with pytest.raises(Conflict) as revoked:
        new_delivery_held(DISABLED, revoked=True, is_test=is_test)
    assert revoked.value.code == "webhook_config_revoked"
