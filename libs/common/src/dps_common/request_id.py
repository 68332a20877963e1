"""The request id of the work in progress, so that one request can be followed across the services.

An HTTP request's id (``X-Request-Id``: the caller's well-formed one, or a new one; assigned by
``dps_common.http.middleware.RequestContext``) is bound here for the request's duration. From here it
goes into every log line the request causes (``dps_common.logs``), onto the internal calls it makes
(``outgoing_headers()``: key introspection, the quote snapshot, the console's calls to the services),
and into the outbox rows of the events it records (``dps_common.outbox.record``), whence the relay
publishes it as the message header ``X-Request-Id`` and the dispatcher logs it with the event and its
deliveries. A consumer or worker binds the id of the event it handles (``bound``).

A context variable: under gevent each greenlet (each request) has its own, and a thread starts with
none. No dependency on falcon: processes that serve no HTTP use it too.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token

HEADER = "X-Request-Id"
_VALID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_CURRENT: ContextVar[str | None] = ContextVar("dps_request_id", default=None)


class _Ids:
    """New ids: 32 hex digits, a random half drawn once per process (again in a forked child) and a
    counter. An id only has to be unique, not unguessable, and a random draw per request is a system
    call (getrandom) on the path of every request."""

    def __init__(self) -> None:
        self.reset()
        os.register_at_fork(after_in_child=self.reset)

    def reset(self) -> None:
        self._prefix = os.urandom(8).hex()
        self._counter = itertools.count(1)

    def next(self) -> str:
        return f"{self._prefix}{next(self._counter):016x}"


_IDS = _Ids()


def new() -> str:
    """A new request id (for a request that came without a well-formed one)."""
    return _IDS.next()


def valid(value: str | None) -> bool:
    """Whether ``value`` is an id we keep and pass on (1 to 128 of ``A-Za-z0-9._:-``): anything else
    a caller sends is replaced, so a log line never carries a stranger's text."""
    return bool(value) and _VALID.match(value or "") is not None


def current() -> str | None:
    return _CURRENT.get()


def bind(request_id: str | None) -> Token[str | None]:
    """Make ``request_id`` the current one; ``unbind(token)`` restores the previous."""
    return _CURRENT.set(request_id)


def unbind(token: Token[str | None]) -> None:
    _CURRENT.reset(token)


@contextmanager
def bound(request_id: str | None) -> Iterator[None]:
    token = _CURRENT.set(request_id)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def outgoing_headers() -> dict[str, str]:
    """``{"X-Request-Id": id}`` for an internal call made on behalf of the current request; ``{}``
    outside one."""
    request_id = _CURRENT.get()
    return {HEADER: request_id} if request_id else {}
