"""The retry schedule: how long to wait after a failed attempt before the next one.

The gaps come from configuration (spec section 8 by default: 30 s widening to about an hour). Each
gap is scaled by a random factor in [1 - jitter, 1 + jitter] so that deliveries failing together
(a receiver outage) do not all come back in the same second.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence


def retry_gap(failed_attempt: int, gaps: Sequence[float], jitter: float, random: Callable[[], float]) -> float | None:
    """Seconds before the attempt after ``failed_attempt`` (1-based); None when it was the last.

    ``random`` returns a float in [0, 1), like ``random.random`` (injected so tests choose it).
    """
    if failed_attempt < 1:
        raise ValueError("attempts are numbered from 1")
    if failed_attempt > len(gaps):
        return None
    factor = 1.0 + jitter * (2.0 * random() - 1.0)
    return max(0.0, gaps[failed_attempt - 1] * factor)
