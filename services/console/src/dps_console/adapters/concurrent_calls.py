"""Calls to the services a page makes side by side (``services.ports.Alongside``): a small pool of
threads per process (greenlets under gunicorn's gevent worker, whose monkey-patching makes the pool's
threads and queue gevent's), owned by the composition root.

Each call runs in a copy of the page's context (``contextvars``), so the request id goes along
(``dps_common.request_id.outgoing_headers``); the credential and the timeout are the call's own
(``adapters.backends.Backend.call``), and whatever it raises is raised again where the page asks for
its result, so errors map as when it ran in the page's thread. The pool is bounded: a call not yet
started when the page asks for it (every thread busy) is taken back and made in the page's own
thread, so a busy pool is never slower than one call after the other. Its idle threads end with it
(``ThreadPoolExecutor``'s own weak reference), when the app that holds it is gone."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextvars import copy_context
from typing import Generic, TypeVar

T = TypeVar("T")


class Started(Generic[T]):
    """A call under way in the pool, or queued for it."""

    def __init__(self, future: Future[T], call: Callable[[], T]):
        self._future = future
        self._call = call

    def result(self) -> T:
        """The call's answer, or what it raised; made here if no thread of the pool has taken it yet."""
        if self._future.cancel():
            return self._call()
        return self._future.result()

    def cancel(self) -> None:
        """Not needed after all (the page failed): dropped if not started yet (one under way ends on its own)."""
        self._future.cancel()


class ConcurrentCalls:
    def __init__(self, threads: int):
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="console-calls")

    def start(self, call: Callable[[], T]) -> Started[T]:
        """``call`` started in the pool, in a copy of the caller's context (its request id)."""
        return Started(self._pool.submit(copy_context().run, call), call)
