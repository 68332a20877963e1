"""Rate-limit configuration, read with the service's other settings and validated at start.

Every service that serves the external API reads the same variables, and all of them must be given
the same values: the counters are keyed by policy, limit and organization, so equal settings make
one budget per organization across the api, the webhook dispatcher and the billing connector.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from limits import RateLimitItem, parse_many

from dps_common.settings import Env

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

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class RateLimitSettings:
    storage_url: str = MEMORY_STORE  # REDIS_URL
    organization: str = DEFAULT_ORGANIZATION_LIMIT  # per organization, "off" for none
    anonymous: str = DEFAULT_ANONYMOUS_LIMIT  # per client address, unauthenticated requests, "off" for none
    documentation: str = DEFAULT_DOCUMENTATION_LIMIT  # per client address, the reference and OpenAPI document
    key_prefix: str = "dps-rate-limits"  # one Redis may serve several installations (and tests)
    store_timeout_seconds: float = 0.2  # a store slower than this is treated as down (fail open)
    # how much of a process's own traffic for a key one round trip leases (dps_common.ratelimit.budget);
    # 0: one round trip per request
    lease_seconds: float = 0.05
    trusted_proxies: tuple[Network, ...] = field(default=())  # whose X-Forwarded-For names the client

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

    @classmethod
    def from_env(cls, env: Env) -> RateLimitSettings:
        storage_url = env.optional("REDIS_URL") or MEMORY_STORE
        if not storage_url.startswith(STORE_SCHEMES):
            env.problems.append(f"REDIS_URL must be a redis://, rediss://, redis+unix:// or {MEMORY_STORE} URL")
        settings = cls(
            storage_url=storage_url,
            organization=_limit(env, "RATE_LIMIT_ORGANIZATION", DEFAULT_ORGANIZATION_LIMIT),
            anonymous=_limit(env, "RATE_LIMIT_ANONYMOUS", DEFAULT_ANONYMOUS_LIMIT),
            documentation=_limit(env, "RATE_LIMIT_DOCUMENTATION", DEFAULT_DOCUMENTATION_LIMIT),
            key_prefix=env.str("RATE_LIMIT_KEY_PREFIX", cls.key_prefix),
            store_timeout_seconds=env.float("RATE_LIMIT_STORE_TIMEOUT_SECONDS", 0.2, minimum=0.01, maximum=5),
            lease_seconds=env.float("RATE_LIMIT_LEASE_SECONDS", cls.lease_seconds, minimum=0, maximum=1),
            trusted_proxies=_networks(env, "RATE_LIMIT_TRUSTED_PROXIES"),
        )
        return settings


def parse_limit(text: str) -> RateLimitItem | None:
    """``"100/second"``, ``"6000 per minute"``, ``"10/5 seconds"`` (limits' notation), or None for off."""
    if text.strip().lower() == OFF:
        return None
    items = parse_many(text)
    if len(items) != 1 or items[0].amount < 1:
        raise ValueError(f"one limit of at least 1 expected, got {text!r}")
    return items[0]


def _limit(env: Env, name: str, default: str) -> str:
    text = env.optional(name).strip() or default
    try:
        parse_limit(text)
    except ValueError:
        env.problems.append(f"{name} must be a limit like '100/second' or '60 per minute', or 'off'; got {text!r}")
    return text


def _networks(env: Env, name: str) -> tuple[Network, ...]:
    raw = env.optional(name)
    try:
        return tuple(ipaddress.ip_network(part.strip()) for part in raw.split(",") if part.strip())
    except ValueError as exc:
        env.problems.append(f"{name}: {exc}")
        return ()
