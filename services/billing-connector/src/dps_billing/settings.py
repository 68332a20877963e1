"""The connector's configuration, read from the environment and validated at start: every problem is
named in one message.

The platform's addresses default to Stripe's; tests and ``make run`` point them at the stand-in.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, ValidationInfo, field_validator

from dps_common.bootstrap_settings import IntrospectingServiceSettings
from dps_common.settings import Flag, HttpUrl, HttpUrlAsGiven, Key, Secret, between, refuse

STRIPE_API_URL = "https://api.stripe.com"
STRIPE_MARKETPLACE_URL = "https://marketplace.stripe.com"
STRIPE_DASHBOARD_URL = "https://dashboard.stripe.com"
MAX_STATE_TTL_SECONDS = 600.0  # an authorize link is good for at most 10 minutes


def _redirect_uri(uri: str) -> str:
    if not urlsplit(uri).path.endswith("/callback"):
        refuse("must be this service's .../billing-connection/callback URL "
               "(the connect flow starts beside it, at .../billing-connection/start)")
    return uri


def _webhook_secret(secret: str) -> str:
    if not secret.startswith("whsec_"):
        refuse("must be the platform's signing secret (whsec_...)")
    return secret


class Settings(IntrospectingServiceSettings):
    """The connector's own fields; the shared ones (DATABASE_URL, API_URL: key introspection and quote
    snapshots, INTERNAL_API_TOKEN, AMQP_URL, REDIS_URL...) are ``IntrospectingServiceSettings``'."""

    # before the secret key, whose check reads it
    billing_livemode: Flag = Field(False, validation_alias="BILLING_LIVEMODE")
    # the app's secret key (sk_...): token exchange, refresh, deauthorize
    billing_secret_key: str = Field(validation_alias="BILLING_SECRET_KEY", repr=False)
    billing_client_id: str = Field(validation_alias="BILLING_CLIENT_ID")  # the app's client id (ca_...)
    # this service's callback, as registered with the app
    billing_redirect_uri: Annotated[HttpUrlAsGiven, AfterValidator(_redirect_uri)] = Field(
        validation_alias="BILLING_REDIRECT_URI"
    )
    # whsec_...: verifies the platform's Stripe-Signature
    billing_webhook_secret: Annotated[str, AfterValidator(_webhook_secret)] = Field(
        validation_alias="BILLING_WEBHOOK_SECRET", repr=False
    )
    billing_token_key: Key = Field(validation_alias="BILLING_TOKEN_KEY")  # AES-256 key sealing the OAuth tokens
    billing_state_secret: Secret = Field(validation_alias="BILLING_STATE_SECRET")  # HMAC key signing the authorize state
    billing_api_url: HttpUrl = Field(STRIPE_API_URL, validation_alias="BILLING_API_URL")
    billing_marketplace_url: HttpUrl = Field(STRIPE_MARKETPLACE_URL, validation_alias="BILLING_MARKETPLACE_URL")
    # review pages: {url}/{test/}quotes/{id}
    billing_dashboard_url: HttpUrl = Field(STRIPE_DASHBOARD_URL, validation_alias="BILLING_DASHBOARD_URL")
    # per account, shared by every worker (Stripe test mode: 25 writes/s)
    billing_rate_per_second: Annotated[float, between(0.1, 100)] = Field(20.0, validation_alias="BILLING_RATE_PER_SECOND")
    state_ttl_seconds: Annotated[float, between(1, MAX_STATE_TTL_SECONDS)] = Field(
        MAX_STATE_TTL_SECONDS, validation_alias="BILLING_STATE_TTL_SECONDS"
    )
    # the callback page's link back (the application's integration settings)
    return_url: str = Field("/", validation_alias="BILLING_RETURN_URL")
    # CONSOLE_URL: a returnUrl of authorize must be under it (empty: none accepted)
    console_url: HttpUrl = Field("", validation_alias="CONSOLE_URL")
    # A claimed push is another worker's after this, unless renewed (every third of it): short, so that a
    # push whose worker died resumes within about this long (README: a push ends within 30 s).
    push_lease_seconds: Annotated[float, between(2, 3600)] = Field(15.0, validation_alias="PUSH_LEASE_SECONDS")
    push_poll_interval_seconds: Annotated[float, between(0.01, 60)] = Field(1.0, validation_alias="PUSH_POLL_INTERVAL_SECONDS")
    # pushes worked on at once per worker process
    push_concurrency: Annotated[int, between(1, 64)] = Field(2, validation_alias="PUSH_CONCURRENCY")
    # the worker's /healthz and /metrics (dps_common.process_server); 0: none
    worker_metrics_port: Annotated[int, between(0, 65535)] = Field(0, validation_alias="BILLING_WORKER_METRICS_PORT")
    worker_metrics_host: str = Field("0.0.0.0", validation_alias="BILLING_WORKER_METRICS_HOST")

    @field_validator("billing_secret_key")
    @classmethod
    def _secret_key_of_the_mode(cls, key: str, info: ValidationInfo) -> str:
        """A secret key, live or test as BILLING_LIVEMODE says (unset or unreadable: test)."""
        livemode = info.data.get("billing_livemode", False)
        if not key.startswith(("sk_", "rk_")):
            refuse("must be the app's secret key (sk_...)")
        if key.startswith(("sk_live_", "sk_test_")) and key.startswith("sk_live_") != livemode:
            refuse("is a {mode} mode key but BILLING_LIVEMODE is {livemode}",
                   mode="live" if key.startswith("sk_live_") else "test", livemode=str(livemode).lower())
        return key


def start_url(settings: Settings) -> str:
    """Where a browser starts the connect flow: beside the callback, so that the nonce cookie set there
    (same origin, same path) comes back with the platform's redirect."""
    parts = urlsplit(settings.billing_redirect_uri)
    path = parts.path[: -len("callback")] + "start"
    return f"{parts.scheme}://{parts.netloc}{path}"


def cookie_path(settings: Settings) -> str:
    path = urlsplit(settings.billing_redirect_uri).path
    return path[: -len("callback")].rstrip("/") or "/"
