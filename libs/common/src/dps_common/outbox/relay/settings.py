"""The relay's configuration, read from the environment and validated at start."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from dps_common.messaging import DEFAULT_AMQP_URL, DEFAULT_EVENTS_EXCHANGE
from dps_common.messaging.shards import MAX_SHARDS
from dps_common.settings import EnvSettings, PostgresUrl, between


class RelaySettings(EnvSettings):
    database_url: PostgresUrl = Field(validation_alias="DATABASE_URL")
    # the service whose outbox this relay publishes (``api``, ``billing-connector``): in its log lines
    service: str = Field("api", validation_alias="SERVICE_NAME")
    # or filesystem:///folder (make run without RabbitMQ)
    amqp_url: str = Field(DEFAULT_AMQP_URL, validation_alias="AMQP_URL")
    events_exchange: str = Field(DEFAULT_EVENTS_EXCHANGE, validation_alias="EVENTS_EXCHANGE")
    log_level: str = Field("INFO", validation_alias="LOG_LEVEL")
    # rows claimed, published and marked per transaction
    batch_size: Annotated[int, between(1, 10_000)] = Field(100, validation_alias="RELAY_BATCH_SIZE")
    # the safety net under the outbox's notifications (every insert notifies at commit): a notification
    # lost with its connection is found this much later at most
    poll_interval_seconds: Annotated[float, between(0.01, 600)] = Field(30.0, validation_alias="RELAY_POLL_INTERVAL_SECONDS")
    # after a notification wakes an idle relay, how long it waits for more commits before it claims,
    # so that a steady trickle is published in batches (one transaction and one confirm wait each)
    linger_seconds: Annotated[float, between(0, 1)] = Field(0.1, validation_alias="RELAY_LINGER_SECONDS")
    # the events stream's shards by organization (``dps_common.messaging.shards``); the dispatcher's too
    shards: Annotated[int, between(1, MAX_SHARDS)] = Field(1, validation_alias="EVENTS_SHARDS")
    # the relay's /healthz and /metrics; 0: not served (tests and make run start several relays on one host)
    metrics_port: Annotated[int, between(0, 65535)] = Field(0, validation_alias="RELAY_METRICS_PORT")
    metrics_host: str = Field("0.0.0.0", validation_alias="RELAY_METRICS_HOST")

    @property
    def application_name(self) -> str:
        """Its connections' name in pg_stat_activity, per service (its LISTEN connection's adds ``-listen``)."""
        return f"dps-outbox-relay-{self.service}"
