"""The platform client over a scripted ``stripe`` HTTP client: the requests it sends (form fields,
token, idempotency key) and how it treats each answer. The same behaviours run against the platform
stand-in in tests/integration."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

import pytest
import stripe
from requests.structures import CaseInsensitiveDict

from dps_billing.adapters.billing_platform.client import BillingClient, Created
from dps_billing.adapters.billing_platform.errors import PlatformRejected, PlatformUnauthorized, PlatformUnavailable
from dps_billing.adapters.billing_platform.retry import Retrier, RetryPolicy
from dps_billing.domain.plan import PriceParams, ProductParams, QuoteLineItem, QuoteParams, Recurring

Answer = tuple[int, dict[str, Any], dict[str, str]] | Exception


class ScriptedHTTP(stripe.HTTPClient):
    name = "scripted"

    def __init__(self, *answers: Answer) -> None:
        super().__init__()
        self.answers = list(answers)
        self.sent: list[tuple[str, str, dict[str, str], dict[str, str]]] = []

    def request(self, method: str, url: str, headers: Mapping[str, str] | None, post_data: Any = None, *,
                _usage: list[str] | None = None) -> tuple[str, int, Mapping[str, str]]:
        self.sent.append((method, url, dict(headers or {}), dict(parse_qsl(post_data or ""))))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        status, body, response_headers = answer
        return json.dumps(body), status, CaseInsensitiveDict({"Request-Id": "req_1", **response_headers})

    def close(self) -> None:
        pass


def ok(object_id: str, **headers: str) -> Answer:
    return 200, {"id": object_id, "object": "product"}, headers


def failure(status: int, message: str = "nope", code: str | None = None, param: str | None = None,
            error_type: str = "invalid_request_error", **headers: str) -> Answer:
    error: dict[str, Any] = {"type": error_type, "message": message}
    error |= {"code": code} if code else {}
    error |= {"param": param} if param else {}
    return status, {"error": error}, headers


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(http: ScriptedHTTP, sleeps: Sleeps | None = None, pacer: Any = None) -> BillingClient:
    retrier = Retrier(RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=8, max_total=60),
                      sleep=sleeps if sleeps is not None else Sleeps(), random=lambda: 1.0)
    return BillingClient("tok_access", "acct_1", api_url="http://billing.test/", http_client=http, retrier=retrier,
                         pacer=pacer)


PRODUCT = ProductParams(name="Analytics", metadata={"service_product_input_id": "L1", "service_product_spec_id": "S1",
                                                    "service_quote_price_frequency": "MONTHLY"})


def test_a_product() -> None:
    http = ScriptedHTTP(ok("prod_1"))
    assert client(http).create_product(PRODUCT, idempotency_key="push-1:product:L1") == Created("prod_1", False)
    [(method, url, headers, form)] = http.sent
    assert (method, url) == ("post", "http://billing.test/v1/products")
    assert headers["Authorization"] == "Bearer tok_access"
    assert headers["Idempotency-Key"] == "push-1:product:L1"
    assert "Stripe-Account" not in headers
    assert form == {"name": "Analytics", "metadata[service_product_input_id]": "L1",
                    "metadata[service_product_spec_id]": "S1", "metadata[service_quote_price_frequency]": "MONTHLY"}


def test_prices_recurring_and_one_time() -> None:
    http = ScriptedHTTP(ok("price_1"), ok("price_2"))
    billing = client(http)
    billing.create_price(PriceParams("usd", 125050, Recurring("month", 3)), product_id="prod_1", idempotency_key="k1")
    billing.create_price(PriceParams("jpy", 1500, None), product_id="prod_2", idempotency_key="k2")
    assert http.sent[0][1] == "http://billing.test/v1/prices"
    assert http.sent[0][3] == {"currency": "usd", "product": "prod_1", "unit_amount": "125050",
                               "recurring[interval]": "month", "recurring[interval_count]": "3"}
    assert http.sent[1][3] == {"currency": "jpy", "product": "prod_2", "unit_amount": "1500"}


def test_a_draft_quote() -> None:
    http = ScriptedHTTP(ok("qt_1"))
    quote = QuoteParams(description="Acme", line_items=(QuoteLineItem("L1", 3), QuoteLineItem("L2", 1)),
                        expires_at=1775001599, effective_date=1775001600,
                        subscription_metadata={"service_subscription_terms_months": "12"},
                        metadata={"service_pricing_quote_id": "Q1"})
    created = client(http).create_quote(quote, price_ids={"L1": "price_1", "L2": "price_2"}, idempotency_key="k")
    assert created.id == "qt_1"
    assert http.sent[0][1] == "http://billing.test/v1/quotes"
    assert http.sent[0][3] == {
        "description": "Acme",
        "line_items[0][price]": "price_1", "line_items[0][quantity]": "3",
        "line_items[1][price]": "price_2", "line_items[1][quantity]": "1",
        "expires_at": "1775001599",
        "metadata[service_pricing_quote_id]": "Q1",
        "subscription_data[metadata][service_subscription_terms_months]": "12",
        "subscription_data[effective_date]": "1775001600",
    }


def test_a_quote_needs_every_price_id() -> None:
    quote = QuoteParams("Acme", (QuoteLineItem("L1", 1),), 1775001599, None, {}, {})
    with pytest.raises(ValueError, match="L1"):
        client(ScriptedHTTP()).create_quote(quote, price_ids={}, idempotency_key="k")


@pytest.mark.parametrize("key", ["", "k" * 256])
def test_an_idempotency_key_is_required(key: str) -> None:
    with pytest.raises(ValueError):
        client(ScriptedHTTP()).create_product(PRODUCT, idempotency_key=key)


def test_a_replayed_answer_is_reported() -> None:
    http = ScriptedHTTP(ok("prod_1", **{"Idempotent-Replayed": "true"}))
    assert client(http).create_product(PRODUCT, idempotency_key="k") == Created("prod_1", True)


def test_429_409_5xx_and_lost_connections_are_retried_with_the_same_key() -> None:
    lost = stripe.APIConnectionError("connection reset", should_retry=True)
    http = ScriptedHTTP(failure(429, "slow down", code="rate_limit", error_type="invalid_request_error",
                                **{"Retry-After": "2"}),
                        failure(409, "lock", code="lock_timeout"), lost, failure(500, "oops", error_type="api_error"),
                        ok("prod_1"))
    sleeps = Sleeps()
    http_retrier_client = BillingClient(
        "tok", "acct_1", api_url="http://billing.test", http_client=http,
        retrier=Retrier(RetryPolicy(max_attempts=5, max_total=60), sleep=sleeps, random=lambda: 1.0))
    assert http_retrier_client.create_product(PRODUCT, idempotency_key="same").id == "prod_1"
    assert [headers["Idempotency-Key"] for _, _, headers, _ in http.sent] == ["same"] * 5
    assert sleeps == [2.0, 1.0, 2.0, 4.0]  # the first wait is Retry-After's 2 s, over the 0.5 s backoff


def test_stripe_should_retry_false_is_final() -> None:
    http = ScriptedHTTP(failure(500, "replayed failure", error_type="api_error", **{"Stripe-Should-Retry": "false"}))
    with pytest.raises(PlatformRejected) as raised:
        client(http).create_product(PRODUCT, idempotency_key="k")
    assert len(http.sent) == 1 and raised.value.status == 500 and not raised.value.retry_later


def test_stripe_should_retry_true_is_retried() -> None:
    http = ScriptedHTTP(failure(400, "try again", **{"Stripe-Should-Retry": "true"}), ok("prod_1"))
    assert client(http).create_product(PRODUCT, idempotency_key="k").id == "prod_1"


def test_a_rejection_carries_the_platforms_message_code_and_param() -> None:
    http = ScriptedHTTP(failure(400, "Invalid integer: abc", code="parameter_invalid_integer", param="unit_amount"))
    with pytest.raises(PlatformRejected) as raised:
        client(http).create_product(PRODUCT, idempotency_key="k")
    error = raised.value
    assert (error.message, error.code, error.param, error.status) == ("Invalid integer: abc",
                                                                     "parameter_invalid_integer", "unit_amount", 400)
    assert error.error_type == "invalid_request_error" and error.request_id == "req_1"
    assert len(http.sent) == 1


def test_a_reused_key_with_other_parameters() -> None:
    http = ScriptedHTTP(failure(400, "Keys for idempotent requests can only be used with the same parameters",
                                error_type="idempotency_error"))
    with pytest.raises(PlatformRejected) as raised:
        client(http).create_product(PRODUCT, idempotency_key="k")
    assert raised.value.error_type == "idempotency_error"


def test_401_is_its_own_error_and_a_new_token_is_one_call_away() -> None:
    http = ScriptedHTTP(failure(401, "Expired API Key provided", code="api_key_expired",
                                error_type="invalid_request_error"), ok("prod_1"))
    billing = client(http)
    with pytest.raises(PlatformUnauthorized) as raised:
        billing.create_product(PRODUCT, idempotency_key="k")
    assert raised.value.code == "api_key_expired" and len(http.sent) == 1
    assert billing.with_access_token("tok_new").create_product(PRODUCT, idempotency_key="k").id == "prod_1"
    assert http.sent[1][2]["Authorization"] == "Bearer tok_new" and http.sent[1][2]["Idempotency-Key"] == "k"


def test_exhausted_retries_end_with_platform_unavailable() -> None:
    http = ScriptedHTTP(*[failure(503, "down", error_type="api_error") for _ in range(4)])
    with pytest.raises(PlatformUnavailable) as raised:
        client(http).create_product(PRODUCT, idempotency_key="k")
    assert raised.value.retry_later and raised.value.status == 503 and len(http.sent) == 4


def test_a_tls_failure_is_not_retried() -> None:
    http = ScriptedHTTP(stripe.APIConnectionError("certificate verify failed", should_retry=False))
    with pytest.raises(PlatformUnavailable) as raised:
        client(http).create_product(PRODUCT, idempotency_key="k")
    assert not raised.value.retry_later and len(http.sent) == 1


def test_the_pacer_is_asked_before_every_attempt() -> None:
    turns: list[str] = []

    class Recorder:
        def wait_turn(self, account_id: str) -> None:
            turns.append(account_id)

    http = ScriptedHTTP(failure(429, "slow down"), ok("prod_1"))
    client(http, pacer=Recorder()).create_product(PRODUCT, idempotency_key="k")
    assert turns == ["acct_1", "acct_1"]
