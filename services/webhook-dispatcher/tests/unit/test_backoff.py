"""The retry schedule: configured gaps, jitter within its bounds, nothing after the last attempt."""

import pytest

from dps_webhooks.domain.backoff import retry_gap
from dps_webhooks.settings import DEFAULT_RETRY_GAPS


def middle():
    return 0.5


def test_without_jitter_the_gaps_are_the_configured_ones():
    gaps = [retry_gap(attempt, DEFAULT_RETRY_GAPS, 0.2, middle) for attempt in range(1, 8)]
    assert gaps == list(DEFAULT_RETRY_GAPS)


def test_the_default_schedule_matches_the_spec():
    assert len(DEFAULT_RETRY_GAPS) + 1 == 8  # eight attempts
    assert DEFAULT_RETRY_GAPS[0] == 30  # first retry after about 30 s
    assert list(DEFAULT_RETRY_GAPS) == sorted(DEFAULT_RETRY_GAPS)  # widening
    assert 3000 <= DEFAULT_RETRY_GAPS[-1] <= 3600  # to about an hour
    assert 100 * 60 <= sum(DEFAULT_RETRY_GAPS) <= 130 * 60  # about two hours from first to last


@pytest.mark.parametrize(("draw", "factor"), [(0.0, 0.8), (0.25, 0.9), (0.5, 1.0), (0.999999, 1.2)])
def test_jitter_scales_the_gap_within_its_bounds(draw, factor):
    assert retry_gap(1, (30.0,), 0.2, lambda: draw) == pytest.approx(30.0 * factor, rel=1e-5)


def test_there_is_no_gap_after_the_last_attempt():
    assert retry_gap(7, DEFAULT_RETRY_GAPS, 0.2, middle) == pytest.approx(3120.0)
    assert retry_gap(8, DEFAULT_RETRY_GAPS, 0.2, middle) is None
    assert retry_gap(1, (), 0.2, middle) is None


def test_zero_gaps_stay_zero_and_attempts_count_from_one():
    assert retry_gap(1, (0.0, 0.0), 0.5, lambda: 0.9) == 0.0
    with pytest.raises(ValueError):
        retry_gap(0, DEFAULT_RETRY_GAPS, 0.2, middle)
