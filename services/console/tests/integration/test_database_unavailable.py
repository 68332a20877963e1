"""The console when its database cannot be reached (a server that refuses every connection): its pages
answer a 503 page with Retry-After, never the 500 one, whether the session lookup (a middleware) or
the page itself meets the database first."""

from __future__ import annotations

import falcon.testing

from dps_common.crypto import new_key
from dps_common.db import Transactions, make_engine

from dps_console.composition import build_http
from dps_console.domain.tokens import new_token
from dps_console.resources.web import Cookies
from dps_console.settings import Settings

UNREACHABLE = "postgresql://postgres@127.0.0.1:1/nothing"  # nothing listens on port 1


def test_a_database_that_cannot_be_reached_is_a_503_page() -> None:
    settings = Settings.from_env({
        "DATABASE_URL": UNREACHABLE,
        "API_URL": "http://127.0.0.1:9/external/v1",
        "API_INTERNAL_URL": "http://127.0.0.1:9",
        "WEBHOOKS_URL": "http://127.0.0.1:9/external/v1",
        "BILLING_URL": "http://127.0.0.1:9/external/v1",
        "CONSOLE_API_TOKEN": "console-token-0123456789abcdef0123456789abcdef",
        "SMTP_URL": "smtp://127.0.0.1:9",
        "MAIL_FROM": "console@dealpricing.test",
        "CONSOLE_PUBLIC_URL": "http://console.test/console",
        "CONSOLE_SECRET_KEY": new_key(),
        "DPS_ENVIRONMENT": "development",
    })
    engine = make_engine(UNREACHABLE, pool_size=1, application_name="dps-console-unreachable")
    client = falcon.testing.TestClient(build_http(settings, tx=Transactions.for_engine(engine)))
    cookie = f"{Cookies(settings).session}={new_token()}"  # a session to look up: the database is asked
    resp = client.simulate_get("/console/", headers={"Cookie": cookie})
    assert resp.status_code == 503, resp.text
    assert resp.headers["Retry-After"] == "1"
    assert "cannot reach its database" in resp.text
    engine.dispose()
