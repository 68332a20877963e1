"""The console's configuration, read from the environment and validated at start: every problem is
named in one message (variable names: notes of the console contract, README of the service)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from dps_common.bootstrap_settings import ApiClientSettings
from dps_common.settings import Env

SMTP_SCHEMES = ("smtp", "smtps", "smtp+starttls")


@dataclass(frozen=True)
class Settings(ApiClientSettings):
    """The console's own fields; the shared ones (DATABASE_URL; API_URL: the api's public operations,
    e.g. http://127.0.0.1:8080/external/v1; API_CA_FILE: for the three services' certificates) are
    ``ApiClientSettings``'."""

    api_internal_url: str  # the api's base for /internal/v1/console/*, e.g. http://127.0.0.1:8080
    webhooks_url: str  # the dispatcher's /external/v1
    billing_url: str  # the connector's /external/v1
    console_api_token: str  # bearer of the api's /internal/v1/console/*
    smtp_url: str  # smtp://host:port (smtps:// for TLS, smtp+starttls:// for STARTTLS; user:password@ optional)
    mail_from: str
    public_url: str  # where browsers reach the console, e.g. http://127.0.0.1:8083/console (no trailing /)
    secret_key: bytes  # 32 bytes: CSRF tokens' HMAC and the credential's AES-GCM key are derived from it
    sign_in_per_email: int = 5  # sign-in mails asked for one address per window
    sign_in_per_client: int = 30  # sign-in mails asked from one client address per window
    sign_in_window_seconds: int = 900
    trusted_proxy_hops: int = 0  # proxies (the ingress) whose X-Forwarded-For entry names the client
    service_timeout_seconds: float = 10.0
    worker_metrics_port: int = 0  # the mail worker's /healthz and /metrics (dps_common.process_server); 0: none
    worker_metrics_host: str = "0.0.0.0"

    @property
    def https(self) -> bool:
        return self.public_url.startswith("https://")

    @property
    def public_origin(self) -> str:
        parts = urlsplit(self.public_url)
        return f"{parts.scheme}://{parts.netloc}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        env = Env(environ)
        settings = cls(
            **cls.shared_fields(env),
            api_internal_url=env.http_url("API_INTERNAL_URL"),
            webhooks_url=env.http_url("WEBHOOKS_URL"),
            billing_url=env.http_url("BILLING_URL"),
            console_api_token=env.secret("CONSOLE_API_TOKEN").decode(),
            smtp_url=_smtp_url(env),
            mail_from=_mail_from(env),
            public_url=env.http_url("CONSOLE_PUBLIC_URL"),
            secret_key=env.key("CONSOLE_SECRET_KEY"),
            sign_in_per_email=env.int("CONSOLE_SIGN_IN_PER_EMAIL", 5, minimum=1, maximum=1000),
            sign_in_per_client=env.int("CONSOLE_SIGN_IN_PER_CLIENT", 30, minimum=1, maximum=100000),
            sign_in_window_seconds=env.int("CONSOLE_SIGN_IN_WINDOW_SECONDS", 900, minimum=1, maximum=86400),
            trusted_proxy_hops=env.int("CONSOLE_TRUSTED_PROXY_HOPS", 0, minimum=0, maximum=5),
            service_timeout_seconds=env.float("CONSOLE_SERVICE_TIMEOUT_SECONDS", 10.0, minimum=0.1, maximum=120),
            worker_metrics_port=env.int("CONSOLE_WORKER_METRICS_PORT", 0, minimum=0, maximum=65535),
            worker_metrics_host=env.str("CONSOLE_WORKER_METRICS_HOST", cls.worker_metrics_host),
        )
        if settings.public_url and urlsplit(settings.public_url).path in ("", "/"):
            env.problems.append("CONSOLE_PUBLIC_URL must end with the console's path, e.g. https://app.example/console")
        if not settings.development and settings.public_url.startswith("http://"):
            env.problems.append("CONSOLE_PUBLIC_URL must be https:// unless DPS_ENVIRONMENT=development")
        env.check()
        return settings


def _smtp_url(env: Env) -> str:
    value = env.str("SMTP_URL")
    if value:
        parts = urlsplit(value)
        try:
            port = parts.port
        except ValueError:
            port = None
        if parts.scheme not in SMTP_SCHEMES or not parts.hostname or port is None:
            env.problems.append(f"SMTP_URL must be smtp://host:port (or smtps://, smtp+starttls://), got {parts.scheme}://...")
    return value


def _mail_from(env: Env) -> str:
    value = env.str("MAIL_FROM")
    if value and ("@" not in value or "\n" in value or "\r" in value):
        env.problems.append("MAIL_FROM must be an email address")
    return value

