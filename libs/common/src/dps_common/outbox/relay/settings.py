"""The relay's configuration, read from the environment and validated at start."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dps_common.messaging import DEFAULT_AMQP_URL, DEFAULT_EVENTS_EXCHANGE
from dps_common.messaging.shards import MAX_SHARDS
from dps_common.settings import Env


@dataclass(frozen=True)
class RelaySettings:
    database_url: str
    # the service whose outbox this relay publishes (``api``, ``billing-connector``): in its log lines
    service: str = "api"
    amqp_url: str = DEFAULT_AMQP_URL  # or filesystem:///folder (make run without RabbitMQ)
    events_exchange: str = DEFAULT_EVENTS_EXCHANGE
    log_level: str = "INFO"
    batch_size: int = 100  # rows claimed, published and marked per transaction
    poll_interval_seconds: float = 1.0  # fallback when no notification wakes the relay
    # after a notification wakes an idle relay, how long it waits for more commits before it claims,
    # so that a steady trickle is published in batches (one transaction and one confirm wait each)
    linger_seconds: float = 0.1
    # the events stream's shards by organization (``dps_common.messaging.shards``); the dispatcher's too
    shards: int = 1
    # the relay's /healthz and /metrics; 0: not served (tests and make run start several relays on one host)
    metrics_port: int = 0
    metrics_host: str = "0.0.0.0"

    @property
    def application_name(self) -> str:
        """Its connections' name in pg_stat_activity, per service (its LISTEN connection's adds ``-listen``)."""
        return f"dps-outbox-relay-{self.service}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "RelaySettings":
        env = Env(environ)
        settings = cls(
            database_url=env.postgres_url("DATABASE_URL"),
            service=env.str("SERVICE_NAME", cls.service),
            amqp_url=env.str("AMQP_URL", DEFAULT_AMQP_URL),
            events_exchange=env.str("EVENTS_EXCHANGE", DEFAULT_EVENTS_EXCHANGE),
            log_level=env.str("LOG_LEVEL", "INFO"),
            batch_size=env.int("RELAY_BATCH_SIZE", 100, minimum=1, maximum=10_000),
            poll_interval_seconds=env.float("RELAY_POLL_INTERVAL_SECONDS", 1.0, minimum=0.01, maximum=60),
            linger_seconds=env.float("RELAY_LINGER_SECONDS", 0.1, minimum=0, maximum=1),
            shards=env.int("EVENTS_SHARDS", 1, minimum=1, maximum=MAX_SHARDS),
            metrics_port=env.int("RELAY_METRICS_PORT", 0, minimum=0, maximum=65535),
            metrics_host=env.str("RELAY_METRICS_HOST", cls.metrics_host),
        )
        env.check()
        return settings
