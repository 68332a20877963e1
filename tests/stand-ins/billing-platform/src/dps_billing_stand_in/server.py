"""`BillingStandIn`: starts the stand-in on a real socket and gives tests its controls."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

from .app import MARKETPLACE_PREFIX, StandInApp
from .faults import Faults
from .idempotency import IdempotencyStore
from .ids import Clock, new_id
from .oauth import OAuthGrants
from .quotes import with_line_items
from .recording import RecordedRequest, Recorder
from .state import Config, State
from .store import KINDS, ObjectStore
from .webhooks import WebhookDelivery, WebhookSender


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class _RedactingHandler(WSGIRequestHandler):
    """Each request's line with its query's values hidden: an authorize URL carries the app's OAuth
    `state`, a token exchange's redirect its one-time `code`, and no log line holds a secret."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        path, line = getattr(self, "path", None), self.requestline
        if path is not None:
            self.path = _without_query_values(path)
        self.requestline = _without_query_values(line)
        try:
            super().log_request(code, size)
        finally:
            self.requestline = line
            if path is not None:
                self.path = path


def _without_query_values(text: str) -> str:
    return re.sub(r"([?&][^=&#\s]*)=[^&#\s]*", r"\1=***", text)


class BillingStandIn:
    """A Stripe stand-in on a real socket. Start with `BillingStandIn.start(...)`, stop with `stop()`
    (or use it as a context manager)."""

    def __init__(self, state: State, server: BaseWSGIServer, public_host: str) -> None:
        self._state = state
        self._server = server
        self.api_url = f"http://{public_host}:{server.server_port}"
        self.marketplace_url = self.api_url + MARKETPLACE_PREFIX
        self.dashboard_url = self.api_url
        self.faults: Faults = state.faults
        self.clock: Clock = state.clock
        self.config: Config = state.config
        # A short poll interval keeps stop() quick (serve_forever checks for shutdown at each poll).
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="billing-stand-in", daemon=True
        )
        self._thread.start()

    @classmethod
    def start(
        cls,
        secret_key: str = "sk_test_dps_billing_stand_in",
        client_id: str = "ca_dps_billing_stand_in",
        redirect_uris: Iterable[str] = (),
        webhook_url: str | None = None,
        webhook_secret: str = "whsec_dps_billing_stand_in",
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        app_name: str = "Deal Pricing Service",
        platform_account: str | None = None,
        seed: int | None = None,
        log_requests: bool = False,
        rate_limit_per_second: int | None = None,
        webhook_verify: str | bool = True,
    ) -> BillingStandIn:
        """`rate_limit_per_second`: answer 429 to an account's `/v1/` call when that many were admitted in
        the second before it (`faults.rate_limit`; `faults.clear()` removes it too). `webhook_verify`: how
        webhook deliveries check the receiver's certificate (a CA bundle's path for an HTTPS receiver
        with a test certificate; requests' `verify`)."""
        if not secret_key.startswith(("sk_test_", "sk_live_")):
            raise ValueError("secret_key starts with sk_test_ or sk_live_")
        if not client_id.startswith("ca_"):
            raise ValueError("client_id starts with ca_")
        if not webhook_secret.startswith("whsec_"):
            raise ValueError("webhook_secret starts with whsec_")
        config = Config(
            secret_key=secret_key,
            client_id=client_id,
            redirect_uris=tuple(redirect_uris),
            app_name=app_name,
            platform_account=platform_account or new_id("acct"),
        )
        clock = Clock()
        state = State(
            config=config,
            clock=clock,
            grants=OAuthGrants(clock, config.livemode),
            store=ObjectStore(),
            idempotency=IdempotencyStore(clock),
            faults=Faults(seed),
            recorder=Recorder(),
            webhooks=WebhookSender(webhook_secret, webhook_url, verify=webhook_verify),
        )
        if rate_limit_per_second is not None:
            state.faults.rate_limit(rate_limit_per_second)
        urls: dict[str, str] = {}
        server = make_server(
            host, port, StandInApp(state, lambda: dict(urls)), threaded=True,
            request_handler=_RedactingHandler if log_requests else _QuietHandler,
        )
        public_host = "127.0.0.1" if host in ("0.0.0.0", "") else (f"[{host}]" if ":" in host else host)
        stand_in = cls(state, server, public_host)
        urls.update(stand_in.urls())
        return stand_in

    def urls(self) -> dict[str, str]:
        return {
            "BILLING_API_URL": self.api_url,
            "BILLING_MARKETPLACE_URL": self.marketplace_url,
            "Authorize page": self.marketplace_url + "/oauth/v2/authorize",
            "Quote review": self.dashboard_url + "/quotes/{id}",
        }

    def review_url(self, quote_id: str) -> str:
        """Where a draft quote is reviewed (Stripe: https://dashboard.stripe.com/test/quotes/{id})."""
        return f"{self.dashboard_url}/quotes/{quote_id}"

    # -- what happened --------------------------------------------------------------------------------

    def requests(
        self, path: str | None = None, *, path_prefix: str | None = None, method: str | None = None
    ) -> list[RecordedRequest]:
        return self._state.recorder.find(path=path, path_prefix=path_prefix, method=method)

    def busiest_window(self, window: float = 1.0, *, path_prefix: str = "/v1/", account: str | None = None) -> int:
        """The most calls received in any `window` seconds, (t - window, t] as the rate limiter counts,
        per account (or of `account` only), among the recorded calls under `path_prefix`: what a
        client's pacer promised to stay under."""
        by_account: dict[str | None, list[float]] = {}
        for request in self.requests(path_prefix=path_prefix):
            if account is None or request.account == account:
                by_account.setdefault(request.account, []).append(request.at)
        best = 0
        for arrivals in by_account.values():
            arrivals.sort()
            first = 0
            for last, at in enumerate(arrivals):
                while arrivals[first] <= at - window:
                    first += 1
                best = max(best, last - first + 1)
        return best

    def clear_requests(self) -> None:
        self._state.recorder.clear()

    def objects(self, kind: str, account_id: str | None = None) -> list[dict[str, Any]]:
        """Objects of one kind, oldest first, across accounts unless one is named; quotes with their
        `line_items` expanded."""
        if kind not in KINDS:
            raise ValueError(f"kind is one of {', '.join(KINDS)}")
        found = self._state.store.all(kind, account_id)
        if kind == "quote":
            return [with_line_items(q, self._state.store.line_items(q["id"])) for q in found]
        return found

    # -- installs and tokens --------------------------------------------------------------------------

    def install(self, account_id: str | None = None) -> str:
        """What the Install button does: installs the app in the account (a new one by default), sends
        `account.application.authorized`, and returns a one-time code for the token exchange."""
        return self._state.install(account_id)[1]

    def uninstall(self, account_id: str) -> None:
        """Removes the app from the account: its tokens stop working; `account.application.deauthorized`."""
        if not self._state.uninstall(account_id):
            raise ValueError(f"the app is not installed in {account_id}")

    def installed_accounts(self) -> list[str]:
        return self._state.grants.installed()

    def expire_access_tokens(self) -> None:
        self._state.grants.expire_access_tokens()

    def expire_codes(self) -> None:
        self._state.grants.expire_codes()

    def expire_idempotency_keys(self) -> None:
        self._state.idempotency.expire_all()

    def advance_clock(self, seconds: float) -> None:
        """Moves the clock that expiries read (tokens, codes, idempotency keys)."""
        self._state.clock.advance(seconds)

    # -- webhooks -------------------------------------------------------------------------------------

    @property
    def webhook_url(self) -> str | None:
        return self._state.webhooks.url

    @webhook_url.setter
    def webhook_url(self, url: str | None) -> None:
        self._state.webhooks.url = url

    def webhook_events(self) -> list[dict[str, Any]]:
        return self._state.webhooks.events()

    def webhook_deliveries(self) -> list[WebhookDelivery]:
        return self._state.webhooks.deliveries()

    def wait_for_webhooks(self, timeout: float = 10.0) -> list[WebhookDelivery]:
        """Waits until every event so far has been attempted, and returns all deliveries."""
        if not self._state.webhooks.wait_idle(timeout):
            raise TimeoutError(f"webhooks still being delivered after {timeout} s")
        return self.webhook_deliveries()

    def redeliver(self, event_id: str) -> None:
        self._state.webhooks.redeliver(event_id)

    # -- lifecycle ------------------------------------------------------------------------------------

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._state.webhooks.stop()

    def __enter__(self) -> BillingStandIn:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
