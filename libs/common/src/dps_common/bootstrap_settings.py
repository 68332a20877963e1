"""The settings the services share, declared here once: a variable keeps one name, one default and
one check in every service that reads it.

Each service's ``Settings`` inherits the group it belongs to and declares only its own fields (and
its own checks, as validators):

- ``ServiceSettings``: every service (DATABASE_URL, DATABASE_POOL_SIZE, DATABASE_MAX_OVERFLOW, LOG_LEVEL,
  DPS_ENVIRONMENT);
- ``ApiClientSettings``: a service that calls the api (API_URL, API_CA_FILE): the console, and
- ``ExternalApiSettings``: a service of the external API (CURSOR_SECRET, KEY_CACHE_TTL_SECONDS,
  AMQP_URL and EVENTS_EXCHANGE for key events, REDIS_URL and RATE_LIMIT_*): the api, and
- ``IntrospectingServiceSettings``: both, with INTERNAL_API_TOKEN: the dispatcher and the connector,
  whose API keys the api checks (key introspection).

Inherited rather than held as a part (``settings.common.database_url``): the fields keep their flat
names, which workers, tools and tests read (and ``model_copy(update=...)`` sets).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, AliasChoices, BeforeValidator, Field

from dps_common.auth.cache import MAX_TTL_SECONDS
from dps_common.messaging import DEFAULT_EVENTS_EXCHANGE
from dps_common.ratelimit.settings import RateLimitSettings
from dps_common.settings import EnvSettings, HttpUrl, PostgresUrl, Secret, SecretText, between, one_of

ENVIRONMENTS = ("production", "development")


class ServiceSettings(EnvSettings):
    database_url: PostgresUrl = Field(validation_alias="DATABASE_URL")
    # each process's connections (dps_common.db.make_engine): DATABASE_POOL_SIZE kept open between
    # uses, DATABASE_MAX_OVERFLOW more opened while that many are in use at once, then closed;
    # DB_POOL_SIZE is the older name, still read (deployments set it)
    db_pool_size: Annotated[int, between(1, 100)] = Field(
        5, validation_alias=AliasChoices("DATABASE_POOL_SIZE", "DB_POOL_SIZE")
    )
    db_max_overflow: Annotated[int, between(0, 100)] = Field(5, validation_alias="DATABASE_MAX_OVERFLOW")
    log_level: str = Field("INFO", validation_alias="LOG_LEVEL")
    # DPS_ENVIRONMENT: "development" allows what only a developer's machine may (plain http:// for the
    # console's address, the dispatcher's loopback receivers); production unless set
    environment: Annotated[
        str, BeforeValidator(lambda value: value.strip().lower() if isinstance(value, str) else value),
        AfterValidator(one_of(*ENVIRONMENTS)),
    ] = Field("production", validation_alias="DPS_ENVIRONMENT")

    @property
    def development(self) -> bool:
        return self.environment == "development"


class ApiClientSettings(ServiceSettings):
    api_url: HttpUrl = Field(validation_alias="API_URL")  # the api (the console's: its /external/v1)
    # CA bundle to trust the api's certificate (empty: the system's)
    api_ca_file: str = Field("", validation_alias="API_CA_FILE")


class ExternalApiSettings(ServiceSettings):
    cursor_secret: Secret = Field(validation_alias="CURSOR_SECRET")
    key_cache_ttl_seconds: Annotated[float, between(0, MAX_TTL_SECONDS)] = Field(
        60.0, validation_alias="KEY_CACHE_TTL_SECONDS"
    )
    # the broker, for key events (each worker drops revoked keys at once); unset: no broker (keys then
    # leave the cache after its TTL only). A service that consumes events gives this field its default.
    amqp_url: str = Field("", validation_alias="AMQP_URL")
    events_exchange: str = Field(DEFAULT_EVENTS_EXCHANGE, validation_alias="EVENTS_EXCHANGE")
    rate_limits: RateLimitSettings = RateLimitSettings()  # REDIS_URL, RATE_LIMIT_* (dps_common.ratelimit.settings)


class IntrospectingServiceSettings(ExternalApiSettings, ApiClientSettings):
    # the bearer of the api's /internal/v1 (key introspection, quote snapshots)
    internal_api_token: SecretText = Field(validation_alias="INTERNAL_API_TOKEN")
