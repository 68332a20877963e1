"""What the use cases and the pages need of the world outside the console, which the adapters
provide (``dps_console.adapters``) and the composition root hands over."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class ServiceApi(Protocol):
    """One service's HTTP API, called as the signed-in person (their console credential) or with a
    bearer token; raises ``domain.problems.ServiceRefused`` (the service's problem details) or
    ``ServiceUnavailable``."""

    def call(self, method: str, path: str, credential: str | None = None, *, json: Any = None,
             params: dict[str, str] | None = None, bearer: str | None = None, once: str | None = None) -> Any:
        """The decoded JSON answer (None when empty). ``once``: the submitted form's one-time token,
        sent as the ``Idempotency-Key``."""
        ...


class ServiceApis(Protocol):
    """The three services the console shows."""

    @property
    def api(self) -> ServiceApi: ...  # the api's /external/v1

    @property
    def internal(self) -> ServiceApi: ...  # the api's base: /internal/v1/console/*

    @property
    def webhooks(self) -> ServiceApi: ...

    @property
    def billing(self) -> ServiceApi: ...


class Started(Protocol[T_co]):
    """A call made alongside the page's own (``Alongside.start``)."""

    def result(self) -> T_co:
        """Its answer, or what it raised (raised here, as if the page had made the call itself)."""
        ...

    def cancel(self) -> None:
        """No longer needed (the page failed first)."""
        ...


class Alongside(Protocol):
    """Independent calls of one page made side by side rather than one after the other; each goes
    with the page's request id and its own timeout."""

    def start(self, call: Callable[[], T]) -> Started[T]: ...


class Mailer(Protocol):
    def send(self, to: str, subject: str, body: str) -> None: ...
