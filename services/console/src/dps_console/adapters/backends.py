"""The three services' HTTP APIs (``services.ports.ServiceApi``), called as the signed-in person
(their console credential as ``x-api-key``). A refusal comes back as ``ServiceRefused`` carrying the
service's problem details; an unreachable service as ``ServiceUnavailable``."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import requests

from dps_common import request_id

from dps_console.domain.problems import Problem, ServiceRefused, ServiceUnavailable

log = logging.getLogger("dps.console.backends")

# The services close a keep-alive connection idle for 5 s (dps_common.gunicorn_conf.keepalive; make
# run's proxy likewise). A request sent on it just as the server closes it is lost, unanswered, and
# the page would say the service is unavailable: a connection idle this long is not used again.
IDLE_SECONDS = 4.0


class Backend:
    """One service's base URL; ``call`` sends one request and returns the decoded JSON (or None).

    Each thread has its own connection (a ``requests.Session`` per thread: the pages are served by
    several threads), started anew once it has been idle ``IDLE_SECONDS``."""

    def __init__(self, name: str, base_url: str, *, verify: bool | str = True, timeout: float = 10.0):
        self.name = name
        self.base_url = base_url
        self.verify = verify
        self.timeout = timeout
        self._local = threading.local()

    def call(self, method: str, path: str, credential: str | None = None, *, json: Any = None,
             params: dict[str, str] | None = None, bearer: str | None = None, once: str | None = None) -> Any:
        """``once``: the submitted form's one-time token, sent as the ``Idempotency-Key`` (the
        service runs a keyed POST once, and answers a repeat with the first answer, its secret null)."""
        # the console's request id goes along: the service logs its part under the same id
        headers = {"Accept": "application/json", **request_id.outgoing_headers()}
        if once is not None:
            headers["Idempotency-Key"] = once
        if credential is not None:
            headers["x-api-key"] = credential
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        try:
            resp = self._session().request(
                method, self.base_url + path, json=json, params=params, headers=headers,
                verify=self.verify, timeout=self.timeout, allow_redirects=False,
            )
        except requests.RequestException as exc:
            log.warning("service unreachable", extra={"backend": self.name, "error": type(exc).__name__})
            raise ServiceUnavailable(self.name) from None
        finally:
            self._local.used = time.monotonic()  # the server's idle clock starts once it has answered
        if resp.status_code >= 500:
            log.warning("service error", extra={"backend": self.name, "status": resp.status_code})
        if resp.status_code >= 400:
            try:
                body = resp.json()
            except ValueError:
                body = None
            raise ServiceRefused(self.name, Problem.from_body(resp.status_code, body))
        if resp.status_code == 204 or not resp.content:
            return None
        return resp.json()

    def _session(self) -> requests.Session:
        """This thread's session; a new one (a new connection) when the last was idle too long."""
        local = self._local
        session: requests.Session | None = getattr(local, "session", None)
        if session is None or time.monotonic() - local.used > IDLE_SECONDS:
            if session is not None:
                session.close()
            session = local.session = requests.Session()
            session.trust_env = False  # the services are reached directly, never through a proxy of the environment
        return session


@dataclass(frozen=True)
class Backends:
    api: Backend  # the api's /external/v1
    internal: Backend  # the api's base: /internal/v1/console/*
    webhooks: Backend
    billing: Backend

    @classmethod
    def from_urls(cls, api: str, internal: str, webhooks: str, billing: str, *,
                  verify: bool | str = True, timeout: float = 10.0) -> "Backends":
        def backend(name: str, url: str) -> Backend:
            return Backend(name, url, verify=verify, timeout=timeout)

        return cls(backend("api", api), backend("api", internal), backend("webhook dispatcher", webhooks),
                   backend("billing connector", billing))
