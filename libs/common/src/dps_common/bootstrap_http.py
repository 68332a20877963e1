"""The HTTP side of a service of the external API, put together the same way in each: its key check
(whose cache key events empty at once), its readiness (the database answers), the shared rate limits
and idempotency. The processes without HTTP use ``dps_common.bootstrap`` only."""

from __future__ import annotations

from typing import Protocol

from dps_common.auth.authenticator import ForgetsKeys, KeyAuthenticator
from dps_common.auth.revocations import start_key_events
from dps_common.bootstrap_settings import ExternalApiSettings
from dps_common.clock import utc_now
from dps_common.db import Transactions, ping
from dps_common.http.app import Api
from dps_common.idempotency import IdempotencyStore


class CachedKeyAuthenticator(KeyAuthenticator, ForgetsKeys, Protocol):
    """A key check whose cache key events can empty."""


def external_api(
    service: str, settings: ExternalApiSettings, tx: Transactions, authenticator: CachedKeyAuthenticator, *,
    key_events: bool,
) -> Api:
    """``key_events``: subscribe this process's key cache to key events (the gunicorn entry point, in
    each worker after the fork; tests leave it off)."""
    if key_events:
        start_key_events(settings.amqp_url, settings.events_exchange, authenticator)
    return Api(service, authenticator, {"database": lambda: ping(tx)},
               rate_limits=settings.rate_limits, idempotency=IdempotencyStore(tx, utc_now))
