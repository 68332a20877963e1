"""An app's responders wrapped for lost database connections (``dps_common.db_retry``): each runs
once more when its connection was lost before it did anything (``retry``), and a lost connection
it cannot recover from is raised as ``DatabaseUnavailable`` (503 with Retry-After), never as the
driver's error (500). No framework here: falcon's responders are plain methods ``on_<method>``."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

from dps_common.db_retry import is_connection_lost, run_retrying, unavailable

_GUARDED = "__dps_db_guarded__"


def guard_responders(resource: object, retried_methods: frozenset[str] | None = None) -> None:
    """Wrap ``resource``'s responders (``on_get``, ``on_post_item``...) on the instance, once; those
    of ``retried_methods`` (``GET``...; None: all) are retried."""
    for name in dir(resource):
        responder = getattr(resource, name, None)
        if name.startswith("on_") and callable(responder) and not getattr(responder, _GUARDED, False):
            method = name.split("_")[1].upper()
            retry = retried_methods is None or method in retried_methods
            setattr(resource, name, _guarded(responder, retry=retry))


def _guarded(responder: Callable[..., Any], *, retry: bool) -> Callable[..., Any]:
    @functools.wraps(responder)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if retry:
            return run_retrying(lambda: responder(*args, **kwargs))
        try:
            return responder(*args, **kwargs)
        except Exception as error:
            if is_connection_lost(error):
                raise unavailable(error) from error
            raise

    setattr(guarded, _GUARDED, True)
    return guarded


def guard_middleware(middleware: object) -> None:
    """A middleware's hooks (``process_request``...) raise a lost connection as ``DatabaseUnavailable``
    (never retried: a hook runs once per request); for an app whose error pages are its own (the
    console), where the API services' problem handler would not see the driver's error."""
    for name in ("process_request", "process_resource", "process_response"):
        hook = getattr(middleware, name, None)
        if callable(hook) and not getattr(hook, _GUARDED, False):
            guarded = _guarded(hook, retry=False)
            # bound to the middleware again: falcon takes only bound methods as a middleware's hooks
            setattr(middleware, name, types.MethodType(lambda _self, *args, _call=guarded: _call(*args), middleware))
