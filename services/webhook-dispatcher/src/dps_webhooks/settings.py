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

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from dps_common.bootstrap_settings import IntrospectingServiceSettings
from dps_common.messaging import DEFAULT_AMQP_URL
from dps_common.messaging.shards import MAX_SHARDS
from dps_common.settings import Env, Network

# Gaps before attempts 2..8: 30 s widening to about an hour, 1 h 59 min from first to eighth attempt.
DEFAULT_RETRY_GAPS = (30.0, 90.0, 300.0, 600.0, 1200.0, 1800.0, 3120.0)


@dataclass(frozen=True)
class Settings(IntrospectingServiceSettings):
    """The dispatcher's own fields; the shared ones (DATABASE_URL, API_URL, INTERNAL_API_TOKEN, AMQP_URL,
    REDIS_URL...) are ``IntrospectingServiceSettings``'."""

    amqp_url_when_unset: ClassVar[str] = DEFAULT_AMQP_URL  # the consumer needs a broker

    secret_key: bytes  # AES-256 key sealing the endpoints' signing secrets
    events_queue: str = "webhook-dispatcher.events"  # with shards, the prefix of ``<queue>.shard-<n>``
    events_shards: int = 1  # the relays' EVENTS_SHARDS: one queue, and one active consumer, per shard
    consumer_shards: tuple[int, ...] = ()  # the shards this worker consumes first; () : all of them
    retry_gaps: tuple[float, ...] = DEFAULT_RETRY_GAPS  # one per retry: attempts = len + 1
    retry_jitter: float = 0.2  # each gap is scaled by a random factor in [1 - j, 1 + j]
    attempt_timeout_seconds: float = 10.0
    lease_seconds: float = 60.0  # a claimed delivery is another worker's after this; > the timeout
    disable_after_failures: int = 20
    retention_days: float = 30.0
    retention_interval_seconds: float = 3600.0
    poll_interval_seconds: float = 1.0  # fallback when no notification wakes the worker
    # a lone event waits this long for others before the consumer stores it (one transaction, one ack)
    consumer_linger_seconds: float = 0.02
    # finished attempts wait up to this long to be recorded together (the receiver has them already)
    record_linger_seconds: float = 0.2
    delivery_concurrency: int = 16  # attempts in flight per worker process
    allowed_networks: tuple[Network, ...] = field(default=())
    receiver_ca_file: str = ""  # extra CA bundle for receivers (tests, private installs)
    # the worker's /healthz and /metrics; 0: not served (several workers share a host in tests and make run)
    metrics_port: int = 0
    metrics_host: str = "0.0.0.0"
    # development only (see the module's docstring): plain http:// to loopback receivers
    allow_insecure_loopback: bool = False

    @property
    def max_attempts(self) -> int:
        return len(self.retry_gaps) + 1

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        env = Env(environ)
        settings = cls(
            **cls.shared_fields(env),
            secret_key=env.key("WEBHOOK_SECRET_KEY"),
            events_queue=env.str("EVENTS_QUEUE", cls.events_queue),
            events_shards=env.int("EVENTS_SHARDS", 1, minimum=1, maximum=MAX_SHARDS),
            consumer_shards=_shards(env, "WEBHOOK_CONSUMER_SHARDS"),
            retry_gaps=_gaps(env, "WEBHOOK_RETRY_GAPS_SECONDS"),
            retry_jitter=env.float("WEBHOOK_RETRY_JITTER", 0.2, minimum=0, maximum=0.5),
            attempt_timeout_seconds=env.float("WEBHOOK_ATTEMPT_TIMEOUT_SECONDS", 10.0, minimum=0.1, maximum=10.0),
            lease_seconds=env.float("WEBHOOK_LEASE_SECONDS", 60.0, minimum=1, maximum=3600),
            disable_after_failures=env.int("WEBHOOK_DISABLE_AFTER_FAILURES", 20, minimum=1, maximum=1000),
            retention_days=env.float("WEBHOOK_RETENTION_DAYS", 30.0, minimum=0, maximum=365),
            retention_interval_seconds=env.float("WEBHOOK_RETENTION_INTERVAL_SECONDS", 3600.0, minimum=1),
            poll_interval_seconds=env.float("WEBHOOK_POLL_INTERVAL_SECONDS", 1.0, minimum=0.01, maximum=60),
            consumer_linger_seconds=env.float("WEBHOOK_CONSUMER_LINGER_SECONDS", 0.02, minimum=0, maximum=1),
            record_linger_seconds=env.float("WEBHOOK_RECORD_LINGER_SECONDS", 0.2, minimum=0, maximum=5),
            delivery_concurrency=env.int("WEBHOOK_DELIVERY_CONCURRENCY", 16, minimum=1, maximum=256),
            allowed_networks=env.networks("WEBHOOK_ALLOWED_NETWORKS"),
            receiver_ca_file=env.optional("WEBHOOK_RECEIVER_CA_FILE"),
            metrics_port=env.int("WEBHOOK_WORKER_METRICS_PORT", 0, minimum=0, maximum=65535),
            metrics_host=env.str("WEBHOOK_WORKER_METRICS_HOST", cls.metrics_host),
            allow_insecure_loopback=env.bool("WEBHOOK_ALLOW_INSECURE_LOOPBACK"),
        )
        if settings.allow_insecure_loopback and not settings.development:
            env.problems.append(
                "WEBHOOK_ALLOW_INSECURE_LOOPBACK is a development setting (plain http:// to loopback receivers): "
                "it is refused unless DPS_ENVIRONMENT=development; never set it in production"
            )
        if any(shard >= settings.events_shards for shard in settings.consumer_shards):
            env.problems.append(f"WEBHOOK_CONSUMER_SHARDS must be below EVENTS_SHARDS ({settings.events_shards})")
        if settings.lease_seconds <= settings.attempt_timeout_seconds:
            env.problems.append("WEBHOOK_LEASE_SECONDS must be longer than WEBHOOK_ATTEMPT_TIMEOUT_SECONDS")
        env.check()
        return settings


def _shards(env: Env, name: str) -> tuple[int, ...]:
    raw = env.optional(name).strip()
    try:
        shards = tuple(sorted({int(part) for part in raw.split(",") if part.strip()}))
    except ValueError:
        env.problems.append(f"{name} must be shard numbers separated by commas, got {raw!r}")
        return ()
    if any(shard < 0 for shard in shards):
        env.problems.append(f"{name} must be shard numbers separated by commas, got {raw!r}")
        return ()
    return shards


def _gaps(env: Env, name: str) -> tuple[float, ...]:
    raw = env.optional(name)
    if not raw:
        return DEFAULT_RETRY_GAPS
    try:
        gaps = tuple(float(part) for part in raw.split(","))
    except ValueError:
        env.problems.append(f"{name} must be comma-separated seconds, got {raw!r}")
        return DEFAULT_RETRY_GAPS
    if any(gap < 0 for gap in gaps):
        env.problems.append(f"{name} must not be negative")
    return gaps
