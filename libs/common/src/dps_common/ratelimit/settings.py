"""Rate-limit configuration, read with the service's other settings and validated at start.

Every service that serves the external API reads the same variables, and all of them must be given
the same values: the counters are keyed by policy, limit and organization, so equal settings make
one budget per organization across the api, the webhook dispatcher and the billing connector.
"""

from __future__ import annotations

from typing import Annotated

from limits import RateLimitItem, parse_many
from pydantic import AfterValidator, BeforeValidator, Field

from dps_common.settings import EnvSettings, Networks, between, refuse

# Stripe allows 100 requests per second per account in live mode; an organization's integrations
# (CRM syncs, quoting tools) are of that kind, and a second-long window lets a sync burst without
# letting one organization take a replica's capacity for long.
DEFAULT_ORGANIZATION_LIMIT = "100/second"
# Requests without a valid key (missing, malformed, unknown or revoked; also the billing platform's
# public callbacks): enough for a person with curl and a browser's OAuth round trip, one a second on
# average for anyone probing key ids.
DEFAULT_ANONYMOUS_LIMIT = "60/minute"
# The reference page, its assets and the OpenAPI document, per client address, apart from the
# anonymous budget (keys probed from an address do not lock its people out of the documentation):
# a view of the page is six requests, so 50 views a minute; the answers are static and cheap.
DEFAULT_DOCUMENTATION_LIMIT = "300/minute"
MEMORY_STORE = "memory://"  # per process: the fallback when no REDIS_URL is given
STORE_SCHEMES = ("redis://", "rediss://", "redis+unix://", MEMORY_STORE)
OFF = "off"


def parse_limit(text: str) -> RateLimitItem | None:
    """``"100/second"``, ``"6000 per minute"``, ``"10/5 seconds"`` (limits' notation), or None for off."""
    if text.strip().lower() == OFF:
        return None
    items = parse_many(text)
    if len(items) != 1 or items[0].amount < 1:
        raise ValueError(f"one limit of at least 1 expected, got {text!r}")
    return items[0]


def _limit(text: str) -> str:
    try:
        parse_limit(text)
    except ValueError:
        refuse("must be a limit like '100/second' or '60 per minute', or 'off'; got {text}", text=repr(text))
    return text


def _store_url(url: str) -> str:
    if not url.startswith(STORE_SCHEMES):
        refuse("must be a redis://, rediss://, redis+unix:// or {memory} URL", memory=MEMORY_STORE)
    return url


Limit = Annotated[str, BeforeValidator(lambda text: text.strip() if isinstance(text, str) else text), AfterValidator(_limit)]


class RateLimitSettings(EnvSettings):
    storage_url: Annotated[str, AfterValidator(_store_url)] = Field(MEMORY_STORE, validation_alias="REDIS_URL")
    # per organization, "off" for none
    organization: Limit = Field(DEFAULT_ORGANIZATION_LIMIT, validation_alias="RATE_LIMIT_ORGANIZATION")
    # per client address, unauthenticated requests, "off" for none
    anonymous: Limit = Field(DEFAULT_ANONYMOUS_LIMIT, validation_alias="RATE_LIMIT_ANONYMOUS")
    # per client address, the reference and OpenAPI document
    documentation: Limit = Field(DEFAULT_DOCUMENTATION_LIMIT, validation_alias="RATE_LIMIT_DOCUMENTATION")
    # one Redis may serve several installations (and tests)
    key_prefix: str = Field("dps-rate-limits", validation_alias="RATE_LIMIT_KEY_PREFIX")
    # a store slower than this is treated as down (fail open)
    store_timeout_seconds: Annotated[float, between(0.01, 5)] = Field(0.2, validation_alias="RATE_LIMIT_STORE_TIMEOUT_SECONDS")
    # how much of a process's own traffic for a key one round trip leases (dps_common.ratelimit.budget);
    # 0: one round trip per request
    lease_seconds: Annotated[float, between(0, 1)] = Field(0.05, validation_alias="RATE_LIMIT_LEASE_SECONDS")
    # whose X-Forwarded-For names the client
    trusted_proxies: Networks = Field((), validation_alias="RATE_LIMIT_TRUSTED_PROXIES")

    @property
    def shared(self) -> bool:
        """Whether the counters are shared by every process (a store), or per process (memory)."""
        return self.storage_url != MEMORY_STORE

    def organization_limit(self) -> RateLimitItem | None:
        return parse_limit(self.organization)

    def anonymous_limit(self) -> RateLimitItem | None:
        return parse_limit(self.anonymous)

    def documentation_limit(self) -> RateLimitItem | None:
        return parse_limit(self.documentation)
