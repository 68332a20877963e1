"""The three services' HTTP APIs (``services.ports.ServiceApi``), called as the signed-in person
(their console credential as ``x-api-key``). A refusal comes back as ``ServiceRefused`` carrying the
service's problem details; an unreachable service as ``ServiceUnavailable``."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import requests

from dps_common import request_id

from dps_console.domain.problems import Problem, ServiceRefused, ServiceUnavailable

log = logging.getLogger("dps.console.backends")


@dataclass
class Backend:
    """One service's base URL; ``call`` sends one request and returns the decoded JSON (or None)."""

    name: str
    base_url: str
    http: requests.Session
    verify: bool | str
    timeout: float

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
            resp = self.http.request(
                method, self.base_url + path, json=json, params=params, headers=headers,
                verify=self.verify, timeout=self.timeout, allow_redirects=False,
            )
        except requests.RequestException as exc:
            log.warning("service unreachable", extra={"backend": self.name, "error": type(exc).__name__})
            raise ServiceUnavailable(self.name) from None
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


@dataclass(frozen=True)
class Backends:
    api: Backend  # the api's /external/v1
    internal: Backend  # the api's base: /internal/v1/console/*
    webhooks: Backend
    billing: Backend

    @classmethod
    def from_urls(cls, api: str, internal: str, webhooks: str, billing: str, *,
                  verify: bool | str = True, timeout: float = 10.0) -> "Backends":
        http = requests.Session()
        http.trust_env = False  # the services are reached directly, never through a proxy of the environment

        def backend(name: str, url: str) -> Backend:
            return Backend(name, url, http, verify, timeout)

        return cls(backend("api", api), backend("api", internal), backend("webhook dispatcher", webhooks),
                   backend("billing connector", billing))
