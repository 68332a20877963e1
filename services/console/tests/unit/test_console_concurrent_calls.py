"""The pool a page's independent calls go through (``adapters.concurrent_calls``): each call carries
the page's request id, raises where the page asks for it what it raised, and a call the busy pool
has not started is made in the page's own thread instead of waiting for a free one."""

from __future__ import annotations

import threading

import pytest

from dps_common import request_id

from dps_console.adapters.concurrent_calls import ConcurrentCalls
from dps_console.domain.problems import Problem, ServiceRefused


def test_a_call_goes_with_the_pages_request_id():
    calls = ConcurrentCalls(2)
    with request_id.bound("the-page-0001"):
        started = calls.start(request_id.outgoing_headers)
    assert started.result() == {"X-Request-Id": "the-page-0001"}


def test_what_a_call_raises_is_raised_where_the_page_asks_for_it():
    calls = ConcurrentCalls(2)

    def refused() -> None:
        raise ServiceRefused("webhook dispatcher", Problem(404))

    started = calls.start(refused)
    with pytest.raises(ServiceRefused) as raised:
        started.result()
    assert raised.value.problem.status == 404


def test_a_call_the_busy_pool_has_not_started_is_made_in_the_pages_thread():
    calls = ConcurrentCalls(1)
    release = threading.Event()
    busy = calls.start(lambda: release.wait(10))  # the pool's one thread, taken
    queued = calls.start(lambda: threading.current_thread().name)
    assert queued.result() == threading.current_thread().name  # not waiting for the busy one
    release.set()
    assert busy.result() is True
