"""The connector's configuration, read from the environment and validated at start: every problem is
named in one message.

The platform's addresses default to Stripe's; tests and ``make run`` point them at the stand-in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from dps_common.bootstrap_settings import IntrospectingServiceSettings
from dps_common.settings import Env

STRIPE_API_URL = "https://api.stripe.com"
STRIPE_MARKETPLACE_URL = "https://marketplace.stripe.com"
STRIPE_DASHBOARD_URL = "https://dashboard.stripe.com"
MAX_STATE_TTL_SECONDS = 600.0  # an authorize link is good for at most 10 minutes


@dataclass(frozen=True)
class Settings(IntrospectingServiceSettings):
    """The connector's own fields; the shared ones (DATABASE_URL, API_URL: key introspection and quote
    snapshots, INTERNAL_API_TOKEN, AMQP_URL, REDIS_URL...) are ``IntrospectingServiceSettings``'."""

    billing_secret_key: str  # the app's secret key (sk_...): token exchange, refresh, deauthorize
    billing_client_id: str  # the app's client id (ca_...)
    billing_redirect_uri: str  # this service's callback, as registered with the app
    billing_webhook_secret: str  # whsec_...: verifies the platform's Stripe-Signature
    billing_token_key: bytes  # AES-256 key sealing the OAuth tokens
    billing_state_secret: bytes  # HMAC key signing the authorize state
    billing_api_url: str = STRIPE_API_URL
    billing_marketplace_url: str = STRIPE_MARKETPLACE_URL
    billing_dashboard_url: str = STRIPE_DASHBOARD_URL  # review pages: {url}/{test/}quotes/{id}
    billing_livemode: bool = False
    billing_rate_per_second: float = 20.0  # per account, shared by every worker (Stripe test mode: 25 writes/s)
    state_ttl_seconds: float = MAX_STATE_TTL_SECONDS
    return_url: str = "/"  # the callback page's link back (the application's integration settings)
    console_url: str = ""  # CONSOLE_URL: a returnUrl of authorize must be under it (empty: none accepted)
    # A claimed push is another worker's after this, unless renewed (every third of it): short, so that a
    # push whose worker died resumes within about this long (README: a push ends within 30 s).
    push_lease_seconds: float = 15.0
    push_poll_interval_seconds: float = 1.0
    push_concurrency: int = 2  # pushes worked on at once per worker process
    worker_metrics_port: int = 0  # the worker's /healthz and /metrics (dps_common.process_server); 0: none
    worker_metrics_host: str = "0.0.0.0"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        env = Env(environ)
        settings = cls(
            **cls.shared_fields(env),
            billing_secret_key=env.str("BILLING_SECRET_KEY"),
            billing_client_id=env.str("BILLING_CLIENT_ID"),
            billing_redirect_uri=env.http_url("BILLING_REDIRECT_URI", keep_trailing_slash=True),
            billing_webhook_secret=env.str("BILLING_WEBHOOK_SECRET"),
            billing_token_key=env.key("BILLING_TOKEN_KEY"),
            billing_state_secret=env.secret("BILLING_STATE_SECRET"),
            billing_api_url=env.http_url("BILLING_API_URL", STRIPE_API_URL),
            billing_marketplace_url=env.http_url("BILLING_MARKETPLACE_URL", STRIPE_MARKETPLACE_URL),
            billing_dashboard_url=env.http_url("BILLING_DASHBOARD_URL", STRIPE_DASHBOARD_URL),
            billing_livemode=env.bool("BILLING_LIVEMODE"),
            billing_rate_per_second=env.float("BILLING_RATE_PER_SECOND", 20.0, minimum=0.1, maximum=100),
            state_ttl_seconds=env.float(
                "BILLING_STATE_TTL_SECONDS", MAX_STATE_TTL_SECONDS, minimum=1, maximum=MAX_STATE_TTL_SECONDS
            ),
            return_url=env.optional("BILLING_RETURN_URL") or "/",
            console_url=env.http_url("CONSOLE_URL") if env.optional("CONSOLE_URL") else "",
            push_lease_seconds=env.float("PUSH_LEASE_SECONDS", 15.0, minimum=2, maximum=3600),
            push_poll_interval_seconds=env.float("PUSH_POLL_INTERVAL_SECONDS", 1.0, minimum=0.01, maximum=60),
            push_concurrency=env.int("PUSH_CONCURRENCY", 2, minimum=1, maximum=64),
            worker_metrics_port=env.int("BILLING_WORKER_METRICS_PORT", 0, minimum=0, maximum=65535),
            worker_metrics_host=env.str("BILLING_WORKER_METRICS_HOST", cls.worker_metrics_host),
        )
        secret_key = settings.billing_secret_key
        if secret_key and not secret_key.startswith(("sk_", "rk_")):
            env.problems.append("BILLING_SECRET_KEY must be the app's secret key (sk_...)")
        elif secret_key.startswith(("sk_live_", "sk_test_")) and secret_key.startswith("sk_live_") != settings.billing_livemode:
            env.problems.append("BILLING_SECRET_KEY is a " + ("live" if secret_key.startswith("sk_live_") else "test")
                                + " mode key but BILLING_LIVEMODE is " + str(settings.billing_livemode).lower())
        if settings.billing_redirect_uri and not urlsplit(settings.billing_redirect_uri).path.endswith("/callback"):
            env.problems.append("BILLING_REDIRECT_URI must be this service's .../billing-connection/callback URL "
                                "(the connect flow starts beside it, at .../billing-connection/start)")
        if settings.billing_webhook_secret and not settings.billing_webhook_secret.startswith("whsec_"):
            env.problems.append("BILLING_WEBHOOK_SECRET must be the platform's signing secret (whsec_...)")
        env.check()
        return settings


def start_url(settings: Settings) -> str:
    """Where a browser starts the connect flow: beside the callback, so that the nonce cookie set there
    (same origin, same path) comes back with the platform's redirect."""
    parts = urlsplit(settings.billing_redirect_uri)
    path = parts.path[: -len("callback")] + "start"
    return f"{parts.scheme}://{parts.netloc}{path}"


def cookie_path(settings: Settings) -> str:
    path = urlsplit(settings.billing_redirect_uri).path
    return path[: -len("callback")].rstrip("/") or "/"
