"""What an attempt's result means for the delivery and its endpoint (spec sections 3 and 6)."""

import pytest

from dps_webhooks.domain.attempt_outcome import (
    AttemptResult,
    DeliveryStatus,
    EndpointEffect,
    EndpointState,
    decide,
    disabled_reason,
    endpoint_after,
)
from dps_webhooks.settings import DEFAULT_RETRY_GAPS


def outcome(result, attempt):
    return decide(result, attempt, gaps=DEFAULT_RETRY_GAPS, jitter=0.2, random=lambda: 0.5)


def answered(status):
    return AttemptResult(status, "body", None, 12)


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_any_2xx_is_a_success_that_resets_the_endpoint(status):
    decided = outcome(answered(status), 3)
    assert (decided.status, decided.retry_in_seconds, decided.endpoint) == (
        DeliveryStatus.SUCCESS,
        None,
        EndpointEffect.RESET_FAILURES,
    )
    assert answered(status).error_message is None


def test_a_2xx_whose_body_missed_the_deadline_is_a_failed_attempt_that_is_retried():
    late = AttemptResult(200, '{"rec', "Timed out after 10 s reading the response body.", 10_004)
    decided = outcome(late, 1)
    assert (decided.status, decided.endpoint) == (DeliveryStatus.FAILED, EndpointEffect.NONE)
    assert decided.retry_in_seconds is not None and not late.succeeded
    assert late.error_message == "Timed out after 10 s reading the response body."


@pytest.mark.parametrize("status", [100, 301, 302, 304, 307, 308, 400, 404, 410, 429, 500, 503])
def test_anything_else_fails_and_is_retried_while_attempts_remain(status):
    decided = outcome(answered(status), 1)
    assert (decided.status, decided.retry_in_seconds, decided.endpoint) == (
        DeliveryStatus.FAILED,
        30.0,
        EndpointEffect.NONE,
    )


def test_redirects_are_failures_and_say_they_were_not_followed():
    assert answered(302).error_message == "The receiver answered 302; redirects are not followed."
    assert answered(500).error_message == "The receiver answered 500; only 2xx counts as delivered."


def test_transport_errors_fail_with_their_message():
    timeout = AttemptResult(None, None, "Timed out after 10 s.", 10000)
    assert not timeout.succeeded
    assert timeout.error_message == "Timed out after 10 s."
    assert outcome(timeout, 2).status is DeliveryStatus.FAILED
    assert outcome(timeout, 2).retry_in_seconds == 90.0


def test_a_2xx_status_with_a_transport_error_is_not_a_success():
    assert not AttemptResult(200, None, "The receiver reset the connection.", 5).succeeded


def test_the_eighth_failure_exhausts_the_delivery_and_counts_against_the_endpoint():
    decided = outcome(answered(500), 8)
    assert (decided.status, decided.retry_in_seconds, decided.endpoint) == (
        DeliveryStatus.EXHAUSTED,
        None,
        EndpointEffect.COUNT_FAILURE,
    )
    assert outcome(answered(200), 8).status is DeliveryStatus.SUCCESS


def test_the_endpoint_is_disabled_at_the_threshold_with_a_reason():
    assert disabled_reason(19, 20) is None
    assert disabled_reason(20, 20) == "Disabled after 20 consecutive failed deliveries."
    assert disabled_reason(21, 20) == "Disabled after 21 consecutive failed deliveries."
    assert disabled_reason(1, 1) == "Disabled after 1 consecutive failed deliveries."


def test_outcomes_for_one_endpoint_apply_in_order_and_disable_it_once():
    count, reset = EndpointEffect.COUNT_FAILURE, EndpointEffect.RESET_FAILURES
    after = endpoint_after("ACTIVE", 5, [count] * 14 + [EndpointEffect.NONE, count, count], 20)
    assert after == EndpointState("DISABLED", 21, "Disabled after 20 consecutive failed deliveries.")
    assert endpoint_after("ACTIVE", 19, [reset, count], 20) == EndpointState("ACTIVE", 1)
    assert endpoint_after("PAUSED", 19, [count], 20) == EndpointState("PAUSED", 20)  # only ACTIVE is disabled
