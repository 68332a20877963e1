"""The dispatcher's configuration, read from the environment and validated at start.

The delivery schedule, attempt timeout, lease and retention are settings so tests can compress time;
their defaults are the spec's (section 8).

``WEBHOOK_ALLOW_INSECURE_LOOPBACK=true`` lets receivers be plain ``http://`` on a loopback address (a
receiver on the developer's own machine, without a certificate). It is a development setting: it is
refused unless ``DPS_ENVIRONMENT=development`` says so too (``make run`` sets both), and
``DPS_ENVIRONMENT`` is ``production`` unless set, so a deployment that copies the one variable fails at
start instead of delivering to its own loopback services.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, ValidationInfo, field_validator

from dps_common.bootstrap_settings import IntrospectingServiceSettings
from dps_common.messaging import DEFAULT_AMQP_URL
from dps_common.messaging.shards import MAX_SHARDS
from dps_common.settings import Flag, Key, Networks, between, comma_separated, refuse

# Gaps before attempts 2..8: 30 s widening to about an hour, 1 h 59 min from first to eighth attempt.
DEFAULT_RETRY_GAPS = (30.0, 90.0, 300.0, 600.0, 1200.0, 1800.0, 3120.0)


def _shards(value: Any) -> Any:
    """``2,0`` as (0, 2)."""
    if not isinstance(value, str):
        return value
    try:
        shards = tuple(sorted({int(part) for part in comma_separated(value)}))
    except ValueError:
        shards = (-1,)
    if any(shard < 0 for shard in shards):
        refuse("must be shard numbers separated by commas, got {value}", value=repr(value))
    return shards


def _gaps(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        gaps = tuple(float(part) for part in value.split(","))
    except ValueError:
        refuse("must be comma-separated seconds, got {value}", value=repr(value))
    if any(gap < 0 for gap in gaps):
        refuse("must not be negative")
    return gaps


class Settings(IntrospectingServiceSettings):
    """The dispatcher's own fields; the shared ones (DATABASE_URL, API_URL, INTERNAL_API_TOKEN, AMQP_URL,
    REDIS_URL...) are ``IntrospectingServiceSettings``'."""

    amqp_url: str = Field(DEFAULT_AMQP_URL, validation_alias="AMQP_URL")  # the consumer needs a broker
    secret_key: Key = Field(validation_alias="WEBHOOK_SECRET_KEY")  # AES-256 key sealing the endpoints' signing secrets
    # with shards, the prefix of ``<queue>.shard-<n>``
    events_queue: str = Field("webhook-dispatcher.events", validation_alias="EVENTS_QUEUE")
    # the relays' EVENTS_SHARDS: one queue, and one active consumer, per shard
    events_shards: Annotated[int, between(1, MAX_SHARDS)] = Field(1, validation_alias="EVENTS_SHARDS")
    # the shards this worker consumes first; () : all of them
    consumer_shards: Annotated[tuple[int, ...], BeforeValidator(_shards)] = Field((), validation_alias="WEBHOOK_CONSUMER_SHARDS")
    # one per retry: attempts = len + 1
    retry_gaps: Annotated[tuple[float, ...], BeforeValidator(_gaps)] = Field(
        DEFAULT_RETRY_GAPS, validation_alias="WEBHOOK_RETRY_GAPS_SECONDS"
    )
    # each gap is scaled by a random factor in [1 - j, 1 + j]
    retry_jitter: Annotated[float, between(0, 0.5)] = Field(0.2, validation_alias="WEBHOOK_RETRY_JITTER")
    attempt_timeout_seconds: Annotated[float, between(0.1, 10.0)] = Field(10.0, validation_alias="WEBHOOK_ATTEMPT_TIMEOUT_SECONDS")
    # a claimed delivery is another worker's after this; > the timeout
    lease_seconds: Annotated[float, between(1, 3600)] = Field(60.0, validation_alias="WEBHOOK_LEASE_SECONDS")
    disable_after_failures: Annotated[int, between(1, 1000)] = Field(20, validation_alias="WEBHOOK_DISABLE_AFTER_FAILURES")
    retention_days: Annotated[float, between(0, 365)] = Field(30.0, validation_alias="WEBHOOK_RETENTION_DAYS")
    retention_interval_seconds: Annotated[float, between(1, float("inf"))] = Field(
        3600.0, validation_alias="WEBHOOK_RETENTION_INTERVAL_SECONDS"
    )
    # the safety net: the worker wakes on notifications and when the next delivery falls due (read at
    # each claim), and looks at least this often anyway (a notification lost with its connection)
    poll_interval_seconds: Annotated[float, between(0.01, 600)] = Field(30.0, validation_alias="WEBHOOK_POLL_INTERVAL_SECONDS")
    # a lone event waits this long for others before the consumer stores it (one transaction, one ack)
    consumer_linger_seconds: Annotated[float, between(0, 1)] = Field(0.02, validation_alias="WEBHOOK_CONSUMER_LINGER_SECONDS")
    # ...and the batch ends sooner once nothing has arrived for this long: the relay's batch, published
    # together, has come whole (0: wait out the linger)
    consumer_quiet_seconds: Annotated[float, between(0, 1)] = Field(0.002, validation_alias="WEBHOOK_CONSUMER_QUIET_SECONDS")
    # finished attempts wait up to this long to be recorded together (the receiver has them already)
    record_linger_seconds: Annotated[float, between(0, 5)] = Field(0.2, validation_alias="WEBHOOK_RECORD_LINGER_SECONDS")
    # attempts in flight per worker process
    delivery_concurrency: Annotated[int, between(1, 256)] = Field(16, validation_alias="WEBHOOK_DELIVERY_CONCURRENCY")
    allowed_networks: Networks = Field((), validation_alias="WEBHOOK_ALLOWED_NETWORKS")
    # extra CA bundle for receivers (tests, private installs)
    receiver_ca_file: str = Field("", validation_alias="WEBHOOK_RECEIVER_CA_FILE")
    # the worker's /healthz and /metrics; 0: not served (several workers share a host in tests and make run)
    metrics_port: Annotated[int, between(0, 65535)] = Field(0, validation_alias="WEBHOOK_WORKER_METRICS_PORT")
    metrics_host: str = Field("0.0.0.0", validation_alias="WEBHOOK_WORKER_METRICS_HOST")
    # a recovery's new deliveries fall due this many a second when the endpoint declares no rateLimitPerSecond
    recover_per_second: Annotated[float, between(0.1, 1000)] = Field(20.0, validation_alias="WEBHOOK_RECOVER_PER_SECOND")
    # an endpoint's rateLimitPerSecond (services/throttling.py): a delivery whose turn is within this
    # waits for it on its thread; a later one is put back until shortly before its turn, when a worker's
    # timer to its next due delivery claims it again. The turns are kept in REDIS_URL's store.
    throttle_horizon_seconds: Annotated[float, between(0.5, 10)] = Field(2.0, validation_alias="WEBHOOK_THROTTLE_HORIZON_SECONDS")
    # development only (see the module's docstring): plain http:// to loopback receivers
    allow_insecure_loopback: Flag = Field(False, validation_alias="WEBHOOK_ALLOW_INSECURE_LOOPBACK")

    @property
    def max_attempts(self) -> int:
        return len(self.retry_gaps) + 1

    @property
    def throttle_horizon(self) -> float:
        """The horizon, shortened when the lease is short: a delivery waits for its turn and then
        makes its attempt under its claim, so both end within the lease (half of what remains)."""
        return min(self.throttle_horizon_seconds, (self.lease_seconds - self.attempt_timeout_seconds) / 2)

    # checks across fields, each on the later field: a field that failed its own check is not in info.data

    @field_validator("consumer_shards")
    @classmethod
    def _shards_exist(cls, shards: tuple[int, ...], info: ValidationInfo) -> tuple[int, ...]:
        events_shards = info.data.get("events_shards")
        if events_shards is not None and any(shard >= events_shards for shard in shards):
            refuse("must be below EVENTS_SHARDS ({shards})", shards=events_shards)
        return shards

    @field_validator("lease_seconds")
    @classmethod
    def _lease_outlasts_an_attempt(cls, lease: float, info: ValidationInfo) -> float:
        if lease <= info.data.get("attempt_timeout_seconds", 0):
            refuse("must be longer than WEBHOOK_ATTEMPT_TIMEOUT_SECONDS")
        return lease

    @field_validator("allow_insecure_loopback")
    @classmethod
    def _development_only(cls, allowed: bool, info: ValidationInfo) -> bool:
        if allowed and info.data.get("environment") != "development":
            refuse(
                "is a development setting (plain http:// to loopback receivers): "
                "it is refused unless DPS_ENVIRONMENT=development; never set it in production"
            )
        return allowed
