"""Helpers of the stand-in's own tests: constants, a webhook receiver, raw HTTP as one account."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import requests
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from dps_billing_stand_in import BillingStandIn

SECRET_KEY = "sk_test_app_secret_for_tests"
CLIENT_ID = "ca_test_client"
WEBHOOK_SECRET = "whsec_test_secret"
REDIRECT_URI = "http://127.0.0.1:9/billing/callback"


class _Quiet(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


@dataclass
class Receiver:
    """The connector's webhook endpoint, as far as these tests need one."""

    url: str = ""
    status: int = 200
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)


def exchange_code(stand_in: BillingStandIn, code: str) -> requests.Response:
    return requests.post(
        stand_in.api_url + "/v1/oauth/token",
        auth=(SECRET_KEY, ""),
        data={"grant_type": "authorization_code", "code": code},
        timeout=10,
    )


def connect(stand_in: BillingStandIn, account_id: str | None = None) -> dict[str, Any]:
    answer = exchange_code(stand_in, stand_in.install(account_id))
    assert answer.status_code == 200, answer.text
    grant: dict[str, Any] = answer.json()
    return grant


class Api:
    """Raw HTTP to the stand-in's API as one connected account."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.token = token

    def post(self, path: str, data: Any = None, *, key: str | None = None, token: str | None = None,
             **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {token or self.token}", **kwargs.pop("headers", {})}
        if key is not None:
            headers["Idempotency-Key"] = key
        return requests.post(self.base + path, data=data, headers=headers, timeout=10, **kwargs)

    def get(self, path: str, params: Any = None, *, token: str | None = None) -> requests.Response:
        headers = {"Authorization": f"Bearer {token or self.token}"}
        return requests.get(self.base + path, params=params, headers=headers, timeout=10)


def error_of(answer: requests.Response, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    assert answer.headers["Request-Id"].startswith("req_")
    error: dict[str, Any] = answer.json()["error"]
    return error


def product(api: Api, name: str = "Widget") -> str:
    answer = api.post("/v1/products", {"name": name})
    assert answer.status_code == 200, answer.text
    product_id: str = answer.json()["id"]
    return product_id


def price(api: Api, currency: str = "usd", amount: int = 1000, interval: str | None = "month",
          count: int = 1) -> str:
    data: dict[str, Any] = {"currency": currency, "product": product(api), "unit_amount": amount}
    if interval is not None:
        data |= {"recurring[interval]": interval, "recurring[interval_count]": count}
    answer = api.post("/v1/prices", data)
    assert answer.status_code == 200, answer.text
    price_id: str = answer.json()["id"]
    return price_id


@contextmanager
def running_receiver() -> Iterator[Receiver]:
    receiver = Receiver()

    @Request.application
    def app(request: Request) -> Response:
        receiver.received.append((dict(request.headers.items()), request.get_data()))
        return Response("ok", status=receiver.status)

    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=_Quiet)
    receiver.url = f"http://127.0.0.1:{server.server_port}/billing/webhooks"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
