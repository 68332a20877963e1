"""The settings the services share, declared and read here once: a variable keeps one name, one
default and one check in every service that reads it.

Each service's ``Settings`` inherits the group it belongs to and declares only its own fields; its
``from_env`` passes ``**cls.shared_fields(env)`` on with them, then adds its own cross-field checks:

- ``ServiceSettings``: every service (DATABASE_URL, DATABASE_POOL_SIZE, DATABASE_MAX_OVERFLOW, LOG_LEVEL,
  DPS_ENVIRONMENT);
- ``ApiClientSettings``: a service that calls the api (API_URL, API_CA_FILE): the console, and
- ``ExternalApiSettings``: a service of the external API (CURSOR_SECRET, KEY_CACHE_TTL_SECONDS,
  AMQP_URL and EVENTS_EXCHANGE for key events, REDIS_URL and RATE_LIMIT_*): the api, and
- ``IntrospectingServiceSettings``: both, with INTERNAL_API_TOKEN: the dispatcher and the connector,
  whose API keys the api checks (key introspection).

Inherited rather than held as a part (``settings.common.database_url``): the fields keep their flat
names, which workers, tools and tests read and ``dataclasses.replace`` sets. The classes are
keyword-only dataclasses, so a service's required fields may follow their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from dps_common.auth.cache import MAX_TTL_SECONDS
from dps_common.messaging import DEFAULT_EVENTS_EXCHANGE
from dps_common.ratelimit.settings import RateLimitSettings
from dps_common.settings import Env

ENVIRONMENTS = ("production", "development")


@dataclass(frozen=True, kw_only=True)
class ServiceSettings:
    database_url: str
    # each process's connections (dps_common.db.make_engine): DATABASE_POOL_SIZE kept open between
    # uses, DATABASE_MAX_OVERFLOW more opened while that many are in use at once, then closed
    db_pool_size: int = 5
    db_max_overflow: int = 5
    log_level: str = "INFO"
    # DPS_ENVIRONMENT: "development" allows what only a developer's machine may (plain http:// for the
    # console's address, the dispatcher's loopback receivers); production unless set
    environment: str = "production"

    @property
    def development(self) -> bool:
        return self.environment == "development"

    @classmethod
    def shared_fields(cls, env: Env) -> dict[str, Any]:
        """The fields declared here and in the shared groups above ``cls``, read from ``env`` (its
        problems collected there): each group adds its own to its bases'."""
        return {
            "database_url": env.postgres_url("DATABASE_URL"),
            "db_pool_size": _pool_size(env),
            "db_max_overflow": env.int("DATABASE_MAX_OVERFLOW", ServiceSettings.db_max_overflow, minimum=0, maximum=100),
            "log_level": env.str("LOG_LEVEL", ServiceSettings.log_level),
            "environment": _environment(env),
        }


@dataclass(frozen=True, kw_only=True)
class ApiClientSettings(ServiceSettings):
    api_url: str  # the api (the console's: its /external/v1)
    api_ca_file: str = ""  # CA bundle to trust the api's certificate (empty: the system's)

    @classmethod
    def shared_fields(cls, env: Env) -> dict[str, Any]:
        return {**super().shared_fields(env), "api_url": env.http_url("API_URL"), "api_ca_file": env.optional("API_CA_FILE")}


@dataclass(frozen=True, kw_only=True)
class ExternalApiSettings(ServiceSettings):
    # AMQP_URL when unset: "" is no broker (keys then leave the cache after its TTL only); a service
    # that consumes events names its default broker here
    amqp_url_when_unset: ClassVar[str] = ""

    cursor_secret: bytes
    key_cache_ttl_seconds: float = 60.0
    amqp_url: str = ""  # the broker, for key events (each worker drops revoked keys at once)
    events_exchange: str = DEFAULT_EVENTS_EXCHANGE
    rate_limits: RateLimitSettings = RateLimitSettings()  # REDIS_URL, RATE_LIMIT_* (dps_common.ratelimit.settings)

    @classmethod
    def shared_fields(cls, env: Env) -> dict[str, Any]:
        default_broker = cls.amqp_url_when_unset
        return {
            **super().shared_fields(env),
            "cursor_secret": env.secret("CURSOR_SECRET"),
            "key_cache_ttl_seconds": env.float(
                "KEY_CACHE_TTL_SECONDS", ExternalApiSettings.key_cache_ttl_seconds, minimum=0, maximum=MAX_TTL_SECONDS
            ),
            "amqp_url": env.str("AMQP_URL", default_broker) if default_broker else env.optional("AMQP_URL"),
            "events_exchange": env.str("EVENTS_EXCHANGE", DEFAULT_EVENTS_EXCHANGE),
            "rate_limits": RateLimitSettings.from_env(env),
        }


@dataclass(frozen=True, kw_only=True)
class IntrospectingServiceSettings(ExternalApiSettings, ApiClientSettings):
    internal_api_token: str  # the bearer of the api's /internal/v1 (key introspection, quote snapshots)

    @classmethod
    def shared_fields(cls, env: Env) -> dict[str, Any]:
        return {**super().shared_fields(env), "internal_api_token": env.secret("INTERNAL_API_TOKEN").decode()}


def _pool_size(env: Env) -> int:
    """DATABASE_POOL_SIZE, or its older name DB_POOL_SIZE (still read: deployments set it)."""
    name = "DATABASE_POOL_SIZE" if env.optional("DATABASE_POOL_SIZE") or not env.optional("DB_POOL_SIZE") else "DB_POOL_SIZE"
    return env.int(name, ServiceSettings.db_pool_size, minimum=1, maximum=100)


def _environment(env: Env) -> str:
    environment = env.optional("DPS_ENVIRONMENT").strip().lower() or ServiceSettings.environment
    if environment not in ENVIRONMENTS:
        env.problems.append(f"DPS_ENVIRONMENT must be production or development, got {environment!r}")
    return environment
