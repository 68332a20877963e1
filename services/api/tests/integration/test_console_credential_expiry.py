"""A console credential stops working at its end in every cache that holds it: the api's own key
cache and another service's cache of introspection answers, whatever their TTL (10 minutes here).
The clocks are the authenticators' own, moved by hand; the api behind introspection keeps the real
time, so an answer it gave after the end would still say active: a refusal comes from the cache."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from uuid import uuid4
from wsgiref.simple_server import WSGIRequestHandler, make_server

import pytest

from dps_common.auth.authenticator import Authenticator
from dps_common.auth.cache import TtlCache
from dps_common.auth.introspection import IntrospectingAuthenticator
from dps_common.errors import Unauthorized

from dps_api.composition import build_http
from dps_api.services.console_credentials import CREDENTIAL_LIFETIME, ConsoleCredentialService
from dps_api.services.identity import DatabaseKeyStore

TOKEN = "introspection-token-0123456789abcdef0123456789"


class Clock:
    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def api_url(settings, tx) -> Iterator[str]:
    """The api over HTTP on this test's transaction (one request at a time, from this test)."""
    app = build_http(settings.model_copy(update={"internal_api_token": TOKEN}), tx=tx)
    server = make_server("127.0.0.1", 0, app, handler_class=_Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def accepts(authenticator: Authenticator | IntrospectingAuthenticator, key: str) -> bool:
    try:
        authenticator.authenticate(key)
    except Unauthorized:
        return False
    return True


def test_the_api_cache_refuses_a_credential_past_its_end(org, tx, settings):
    issued_at = datetime.now(UTC)
    issued = ConsoleCredentialService(tx, settings.api_key_pepper, lambda: issued_at, lambda key_id: None).issue(
        "admin@acme-corp.example", uuid4()
    )
    assert issued.expires_at == issued_at + CREDENTIAL_LIFETIME
    clock = Clock(issued_at + timedelta(hours=1))
    authenticator = Authenticator(DatabaseKeyStore(tx, clock), settings.api_key_pepper, TtlCache(600), clock)
    assert accepts(authenticator, issued.credential)  # loaded into the cache
    clock.now = issued.expires_at
    assert not accepts(authenticator, issued.credential)


def test_an_introspection_cache_refuses_a_credential_past_its_end(org, tx, settings, api_url):
    real_now = datetime.now(UTC)
    # issued 11 hours ago by the api's account: one hour left in real time
    issued_at = real_now - CREDENTIAL_LIFETIME + timedelta(hours=1)
    issued = ConsoleCredentialService(tx, settings.api_key_pepper, lambda: issued_at, lambda key_id: None).issue(
        "admin@acme-corp.example", uuid4()
    )
    clock = Clock(real_now)
    elsewhere = IntrospectingAuthenticator(api_url, TOKEN, TtlCache(600), now=clock)
    assert accepts(elsewhere, issued.credential)  # the api's answer, cached for up to 10 minutes
    clock.now = issued.expires_at + timedelta(seconds=1)
    assert not accepts(elsewhere, issued.credential)
    # an integration key has no end: the same clock changes nothing for it
    assert accepts(elsewhere, org.admin.key)
