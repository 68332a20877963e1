"""What the connector's two processes, the HTTP app (``app``) and the push worker (``worker.loop``),
are both built from besides ``dps_common.bootstrap``: its client of the platform's OAuth app. No HTTP
framework here: the worker imports this module, never ``app``."""

from __future__ import annotations

from dps_billing.platform.oauth import AppOAuth
from dps_billing.settings import Settings


def make_oauth(settings: Settings) -> AppOAuth:
    return AppOAuth(
        api_url=settings.billing_api_url, secret_key=settings.billing_secret_key, client_id=settings.billing_client_id
    )
