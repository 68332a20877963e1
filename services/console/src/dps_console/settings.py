"""The console's configuration, read from the environment and validated at start: every problem is
named in one message (variable names: notes of the console contract, README of the service)."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from dps_common.bootstrap_settings import ApiClientSettings
from dps_common.settings import HttpUrl, Key, SecretText, between, refuse

SMTP_SCHEMES = ("smtp", "smtps", "smtp+starttls")


def _smtp_url(value: str) -> str:
    parts = urlsplit(value)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in SMTP_SCHEMES or not parts.hostname or port is None:
        refuse("must be smtp://host:port (or smtps://, smtp+starttls://), got {scheme}://...", scheme=parts.scheme)
    return value


def _mail_from(value: str) -> str:
    if "@" not in value or "\n" in value or "\r" in value:
        refuse("must be an email address")
    return value


class Settings(ApiClientSettings):
    """The console's own fields; the shared ones (DATABASE_URL; API_URL: the api's public operations,
    e.g. http://127.0.0.1:8080/external/v1; API_CA_FILE: for the three services' certificates) are
    ``ApiClientSettings``'."""

    # the api's base for /internal/v1/console/*, e.g. http://127.0.0.1:8080
    api_internal_url: HttpUrl = Field(validation_alias="API_INTERNAL_URL")
    webhooks_url: HttpUrl = Field(validation_alias="WEBHOOKS_URL")  # the dispatcher's /external/v1
    billing_url: HttpUrl = Field(validation_alias="BILLING_URL")  # the connector's /external/v1
    console_api_token: SecretText = Field(validation_alias="CONSOLE_API_TOKEN")  # bearer of the api's /internal/v1/console/*
    # smtp://host:port (smtps:// for TLS, smtp+starttls:// for STARTTLS; user:password@ optional)
    smtp_url: Annotated[str, AfterValidator(_smtp_url)] = Field(validation_alias="SMTP_URL", repr=False)
    mail_from: Annotated[str, AfterValidator(_mail_from)] = Field(validation_alias="MAIL_FROM")
    # where browsers reach the console, e.g. http://127.0.0.1:8083/console (no trailing /)
    public_url: HttpUrl = Field(validation_alias="CONSOLE_PUBLIC_URL")
    # 32 bytes: CSRF tokens' HMAC and the credential's AES-GCM key are derived from it
    secret_key: Key = Field(validation_alias="CONSOLE_SECRET_KEY")
    # sign-in mails asked for one address per window
    sign_in_per_email: Annotated[int, between(1, 1000)] = Field(5, validation_alias="CONSOLE_SIGN_IN_PER_EMAIL")
    # sign-in mails asked from one client address per window
    sign_in_per_client: Annotated[int, between(1, 100000)] = Field(30, validation_alias="CONSOLE_SIGN_IN_PER_CLIENT")
    sign_in_window_seconds: Annotated[int, between(1, 86400)] = Field(900, validation_alias="CONSOLE_SIGN_IN_WINDOW_SECONDS")
    # proxies (the ingress) whose X-Forwarded-For entry names the client
    trusted_proxy_hops: Annotated[int, between(0, 5)] = Field(0, validation_alias="CONSOLE_TRUSTED_PROXY_HOPS")
    service_timeout_seconds: Annotated[float, between(0.1, 120)] = Field(10.0, validation_alias="CONSOLE_SERVICE_TIMEOUT_SECONDS")
    # the mail worker's /healthz and /metrics (dps_common.process_server); 0: none
    worker_metrics_port: Annotated[int, between(0, 65535)] = Field(0, validation_alias="CONSOLE_WORKER_METRICS_PORT")
    worker_metrics_host: str = Field("0.0.0.0", validation_alias="CONSOLE_WORKER_METRICS_HOST")

    @property
    def https(self) -> bool:
        return self.public_url.startswith("https://")

    @property
    def public_origin(self) -> str:
        parts = urlsplit(self.public_url)
        return f"{parts.scheme}://{parts.netloc}"

    @field_validator("public_url")
    @classmethod
    def _console_address(cls, url: str, info: ValidationInfo) -> str:
        if urlsplit(url).path in ("", "/"):
            refuse("must end with the console's path, e.g. https://app.example/console")
        if url.startswith("http://") and info.data.get("environment") != "development":
            refuse("must be https:// unless DPS_ENVIRONMENT=development")
        return url
