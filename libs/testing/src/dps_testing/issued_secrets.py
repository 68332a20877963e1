"""Every secret a black-box suite was shown during its run, by kind, so that a scan at the end can
search the stack's tables and log lines for all of them (``dps_testing.secret_matcher``).

Secrets are gathered where the suite sees them, not where each test remembers to write them down:
``watch(session)`` hooks a ``requests`` session (the suite's clients and its browsers) and every
answer it gets, redirects included, is harvested: the ``secret`` of a webhook endpoint or of an API
key, a console ``credential``, the ``ticket`` of a billing start URL, the ``state`` and ``code`` of
an OAuth redirect, a cookie a service set (the connect flow's nonce). Not the ``sessionId`` a
console credential is asked for with: it is the console session's row id, which the console logs
and the api names the credential after; the console's secret is its session cookie. ``add`` and
``add_api_key`` take what the suite got another way (the admin command line, the
billing platform stand-in's token exchanges)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import requests

from dps_testing.secret_matcher import MIN_LENGTH

API_KEY = "API key"
CONSOLE_CREDENTIAL = "console credential"
SIGNING_SECRET = "webhook signing secret"
BILLING_TICKET = "billing start ticket"
OAUTH_STATE = "OAuth state"
OAUTH_CODE = "OAuth code"
COOKIE = "cookie (the connect flow's nonce)"  # the only cookie a service of the suite's stack sets
# query parameters that carry a secret, in the URLs of the connect flow (the start URL, the platform's
# authorize page, the callback); elsewhere a ``code`` is a reason (``?billing=error&code=...``)
_QUERY_SECRETS = {"ticket": BILLING_TICKET, "state": OAUTH_STATE, "code": OAUTH_CODE}
_FLOW_PAGES = ("start", "authorize", "callback")
_LARGEST_JSON = 1 << 20  # bigger answers (a 50 MB body) hold no secret the suite was shown


class IssuedSecrets:
    """Secrets by kind; thread-safe (the suites call from several threads at once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_kind: dict[str, set[str]] = {}

    def add(self, kind: str, value: object) -> None:
        if isinstance(value, str) and len(value) >= MIN_LENGTH:
            with self._lock:
                self._by_kind.setdefault(kind, set()).add(value)

    def add_api_key(self, kind: str, key: object) -> None:
        """A key ``dps_<id>_<secret>``: its secret part (the id alone is no secret; the whole key
        holds the part, so a key written whole is found too)."""
        if isinstance(key, str) and key.count("_") >= 2:
            self.add(kind, key.split("_", 2)[2])

    def by_kind(self) -> dict[str, set[str]]:
        with self._lock:
            return {kind: set(values) for kind, values in self._by_kind.items()}

    def labelled(self) -> dict[str, str]:
        """``{"<kind> #<n>": secret}``: labels that say the kind and never the secret."""
        return {f"{kind} #{n}": value for kind, values in sorted(self.by_kind().items())
                for n, value in enumerate(sorted(values), 1)}

    def watch(self, session: requests.Session) -> requests.Session:
        """Harvest every answer ``session`` gets from now on."""
        session.hooks["response"].append(self._harvest)
        return session

    def _harvest(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        request = response.request
        for url in (request.url or "", response.headers.get("Location", "")):
            self._harvest_url(url)
        for cookie in response.cookies:
            self.add(COOKIE, cookie.value)
        answer = _json(response.headers.get("Content-Type", ""), response.content if _small(response) else None)
        for name, value in _fields(answer):
            self._harvest_field(name, value)

    def _harvest_url(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.path.rstrip("/").rsplit("/", 1)[-1] not in _FLOW_PAGES:
            return
        for name, value in parse_qsl(parts.query):
            if name in _QUERY_SECRETS:
                self.add(_QUERY_SECRETS[name], value)

    def _harvest_field(self, name: str, value: object) -> None:
        if name == "credential":
            self.add_api_key(CONSOLE_CREDENTIAL, value)
        elif name == "secret" and isinstance(value, str):
            if value.startswith("dps_"):
                self.add_api_key(API_KEY, value)
            else:
                self.add(SIGNING_SECRET, value)
        elif name in ("startUrl", "url") and isinstance(value, str):
            self._harvest_url(value)


def _small(response: requests.Response) -> bool:
    length = response.headers.get("Content-Length")
    return length is None or (length.isdigit() and int(length) <= _LARGEST_JSON)


def _json(content_type: str, body: object) -> Any:
    if "json" not in content_type or not isinstance(body, str | bytes) or len(body) > _LARGEST_JSON:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def _fields(value: Any) -> Iterator[tuple[str, Any]]:
    """Every (name, value) of a JSON document, at any depth."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield name, item
            yield from _fields(item)
    elif isinstance(value, list):
        for item in value:
            yield from _fields(item)
