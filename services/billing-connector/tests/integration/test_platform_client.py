"""The platform client against the billing platform stand-in (a real HTTP server that behaves as
Stripe does): OAuth, a whole push plan, idempotent replays, retries through injected faults, 401 and
token refresh, deauthorization. Waits are recorded, not slept."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import uuid4

import pytest

from dps_billing.adapters.billing_platform.client import BillingClient, Created, new_http_client
from dps_billing.adapters.billing_platform.errors import (
    InvalidGrant,
    OAuthRejected,
    PlatformRejected,
    PlatformUnauthorized,
    PlatformUnavailable,
)
from dps_billing.adapters.billing_platform.oauth import AppOAuth, TokenGrant
from dps_billing.adapters.billing_platform.retry import Retrier, RetryPolicy
from dps_billing.domain.mapping import plan_push
from dps_billing.domain.plan import PriceParams, ProductParams, PushPlan
from dps_billing.domain.quote_snapshot import (
    BillingFrequency,
    PriceFrequency,
    PriceModel,
    QuoteSnapshot,
    QuoteSnapshotLine,
    QuoteStatus,
)

stand_in_package = pytest.importorskip("dps_billing_stand_in")

SECRET_KEY = "sk_test_app_0123456789abcdef"
CLIENT_ID = "ca_dps_test_app"
PRODUCT = ProductParams(name="Analytics", metadata={"service_product_input_id": "L1"})


class Waits(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@dataclass
class Connected:
    stand_in: Any
    oauth: AppOAuth
    grant: TokenGrant
    client: BillingClient
    waits: Waits


@pytest.fixture
def stand_in() -> Iterator[Any]:
    server = stand_in_package.BillingStandIn.start(
        secret_key=SECRET_KEY, client_id=CLIENT_ID, redirect_uris=["https://dps.test/billing/callback"],
        webhook_url=None, webhook_secret="whsec_test_0123456789", host="127.0.0.1", port=0)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def connected(stand_in: Any) -> Connected:
    waits = Waits()
    retrier = Retrier(RetryPolicy(max_attempts=5, base_delay=0.5, max_delay=8, max_total=60), sleep=waits,
                      random=lambda: 0.5)
    oauth = AppOAuth(api_url=stand_in.api_url, secret_key=SECRET_KEY, client_id=CLIENT_ID, retrier=retrier,
                     timeout=(2, 5))
    grant = oauth.exchange_code(stand_in.install())
    client = BillingClient(grant.access_token, grant.account_id, api_url=stand_in.api_url,
                           http_client=new_http_client((2, 5)), retrier=retrier)
    return Connected(stand_in, oauth, grant, client, waits)


def _line(**changes: Any) -> QuoteSnapshotLine:
    values: dict[str, Any] = dict(
        id=uuid4(), position=1, product_id=uuid4(), product_spec_id="SPEC-1", product_version=1,
        product_name="Analytics Platform", product_short_name=None, custom_name=None,
        price_model=PriceModel.PER_UNIT, price_frequency=PriceFrequency.MONTHLY, quantity=Decimal("2.5"),
        unit_amount=Decimal("1500"), recurring=True, amount=Decimal("3750"))
    return QuoteSnapshotLine(**(values | changes))


def _quote(lines: tuple[QuoteSnapshotLine, ...], **changes: Any) -> QuoteSnapshot:
    today = datetime.now(UTC).date()
    values: dict[str, Any] = dict(
        id=uuid4(), organization_id=uuid4(), name="Acme 2026", status=QuoteStatus.APPROVED, owner_user_id=uuid4(),
        opportunity_id=None, opportunity_crm_id="006-ACME", currency="JPY",
        billing_frequency=BillingFrequency.QUARTERLY, subscription_term_months=12,
        start_date=today + timedelta(days=20), end_date=today + timedelta(days=10), pricebook_id=None,
        pricebook_version=None, recurring_per_billing_period=Decimal("0"), one_time=Decimal("0"),
        total_contract_value=Decimal("0"), lines=lines)
    return QuoteSnapshot(**(values | changes))


def _push(client: BillingClient, plan: PushPlan, push_id: str) -> tuple[list[Created], Created]:
    assert plan.quote is not None and not plan.blocked
    prices: dict[str, str] = {}
    created: list[Created] = []
    for line in plan.lines:
        product = client.create_product(line.product, idempotency_key=f"{push_id}:product:{line.line_id}")
        price = client.create_price(line.price, product_id=product.id, idempotency_key=f"{push_id}:price:{line.line_id}")
        prices[line.line_id] = price.id
        created += [product, price]
    quote = client.create_quote(plan.quote, price_ids=prices, idempotency_key=f"{push_id}:quote")
    return created, quote


def test_oauth_exchange_refresh_and_rolling_refresh_tokens(connected: Connected) -> None:
    grant = connected.grant
    assert grant.account_id.startswith("acct_") and not grant.livemode
    assert grant.expires_at > datetime.now(UTC) + timedelta(minutes=59)
    [exchange] = connected.stand_in.requests(path_prefix="/v1/oauth/token")
    assert exchange.headers["Authorization"].startswith("Basic ")
    refreshed = connected.oauth.refresh(grant.refresh_token)
    assert refreshed.account_id == grant.account_id
    assert refreshed.refresh_token != grant.refresh_token and refreshed.access_token != grant.access_token
    with pytest.raises(InvalidGrant):
        connected.oauth.refresh(grant.refresh_token)  # every refresh expires the token it used


def test_a_code_is_single_use(stand_in: Any) -> None:
    oauth = AppOAuth(api_url=stand_in.api_url, secret_key=SECRET_KEY, client_id=CLIENT_ID)
    code = stand_in.install()
    oauth.exchange_code(code)
    with pytest.raises(InvalidGrant):
        oauth.exchange_code(code)


def test_a_wrong_app_key_is_refused(stand_in: Any) -> None:
    oauth = AppOAuth(api_url=stand_in.api_url, secret_key="sk_test_not_the_app", client_id=CLIENT_ID)
    with pytest.raises(PlatformRejected) as raised:
        oauth.exchange_code(stand_in.install())
    assert not isinstance(raised.value, InvalidGrant) and raised.value.status == 401


def test_a_whole_push(connected: Connected) -> None:
    recurring = _line()
    fee = _line(position=2, price_model=PriceModel.ONE_TIME_FEE, price_frequency=PriceFrequency.ONE_TIME,
                recurring=False, custom_name="Onboarding", quantity=Decimal("1"), unit_amount=Decimal("200000"))
    skipped = _line(position=3, price_model=PriceModel.TIERED)
    snapshot = _quote((recurring, fee, skipped))
    plan = plan_push(snapshot, datetime.now(UTC))
    created, quote = _push(connected.client, plan, "push-1")
    assert quote.id.startswith("qt_") and not quote.replayed
    assert all(not c.replayed for c in created)

    stand_in = connected.stand_in
    products = stand_in.requests(path_prefix="/v1/products")
    assert [p.form["name"] for p in products] == ["Analytics Platform", "Onboarding"]
    assert products[0].form["metadata"] == {"service_product_input_id": str(recurring.id),
                                            "service_product_spec_id": "SPEC-1",
                                            "service_quote_price_frequency": "MONTHLY"}
    assert products[0].headers["Authorization"] == f"Bearer {connected.grant.access_token}"
    assert products[0].headers["Idempotency-Key"] == f"push-1:product:{recurring.id}"
    prices = stand_in.requests(path_prefix="/v1/prices")
    assert prices[0].form == {"currency": "jpy", "product": created[0].id, "unit_amount": "1500",
                              "recurring": {"interval": "month", "interval_count": "3"}}
    assert prices[1].form == {"currency": "jpy", "product": created[2].id, "unit_amount": "200000"}
    [quote_request] = stand_in.requests(path_prefix="/v1/quotes")
    assert quote_request.status == 200
    form = quote_request.form
    assert form["line_items"] == [{"price": created[1].id, "quantity": "3"}, {"price": created[3].id, "quantity": "1"}]
    assert form["description"] == "Acme 2026"
    assert form["metadata"]["service_target_currency"] == "JPY"
    assert form["metadata"]["service_billing_period_months"] == "3"
    assert form["subscription_data"]["metadata"] == {"service_subscription_terms_months": "12"}
    assert plan.quote is not None and int(form["subscription_data"]["effective_date"]) == plan.quote.effective_date
    assert quote_request.response["status"] == "draft"


def test_the_same_key_replays_the_same_object(connected: Connected) -> None:
    first = connected.client.create_product(PRODUCT, idempotency_key="push-2:product:L1")
    again = connected.client.create_product(PRODUCT, idempotency_key="push-2:product:L1")
    assert again == Created(first.id, replayed=True)


def test_the_same_key_with_other_parameters_is_refused(connected: Connected) -> None:
    connected.client.create_product(PRODUCT, idempotency_key="push-3:product:L1")
    with pytest.raises(PlatformRejected) as raised:
        connected.client.create_product(ProductParams(name="Other", metadata={}), idempotency_key="push-3:product:L1")
    assert raised.value.error_type == "idempotency_error" and raised.value.status == 400


def test_rate_limits_are_waited_out_with_retry_after(connected: Connected) -> None:
    connected.stand_in.faults.add(path_prefix="/v1/products", status=429, retry_after=1, count=3)
    created = connected.client.create_product(PRODUCT, idempotency_key="push-4:product:L1")
    attempts = connected.stand_in.requests(path_prefix="/v1/products")
    assert [a.status for a in attempts] == [429, 429, 429, 200]
    assert {a.headers["Idempotency-Key"] for a in attempts} == {"push-4:product:L1"}
    assert len(connected.waits) == 3 and min(connected.waits) >= 1.0
    assert created.id.startswith("prod_")


def test_an_answer_lost_after_the_create_is_recovered_by_replay(connected: Connected) -> None:
    connected.stand_in.faults.drop(1, path_prefix="/v1/products", after_processing=True)
    created = connected.client.create_product(PRODUCT, idempotency_key="push-5:product:L1")
    attempts = connected.stand_in.requests(path_prefix="/v1/products")
    assert [a.dropped for a in attempts] == [True, False]
    assert attempts[1].replayed and created.replayed  # one product, not two


def test_a_connection_dropped_before_processing_is_retried(connected: Connected) -> None:
    connected.stand_in.faults.drop(2, path_prefix="/v1/prices")
    price = connected.client.create_price(PriceParams("usd", 1000, None), product_id=connected.client.create_product(
        PRODUCT, idempotency_key="push-6:product:L1").id, idempotency_key="push-6:price:L1")
    assert price.id.startswith("price_") and not price.replayed
    assert len(connected.stand_in.requests(path_prefix="/v1/prices")) == 3


def test_a_stored_failure_is_not_retried(connected: Connected) -> None:
    connected.stand_in.faults.add(path_prefix="/v1/quotes", status=500, stored=True, count=1)
    product = connected.client.create_product(PRODUCT, idempotency_key="push-7:product")
    price = connected.client.create_price(PriceParams("usd", 1000, None), product_id=product.id,
                                          idempotency_key="push-7:price")
    plan = plan_push(_quote((_line(),), currency="USD"), datetime.now(UTC))
    assert plan.quote is not None
    with pytest.raises(PlatformRejected) as raised:
        connected.client.create_quote(plan.quote, price_ids={plan.lines[0].line_id: price.id},
                                      idempotency_key="push-7:quote")
    assert raised.value.status == 500 and len(connected.stand_in.requests(path_prefix="/v1/quotes")) == 1


def test_persistent_5xx_ends_unavailable(connected: Connected) -> None:
    connected.stand_in.faults.add(path_prefix="/v1/products", status=503)
    with pytest.raises(PlatformUnavailable) as raised:
        connected.client.create_product(PRODUCT, idempotency_key="push-8:product")
    assert raised.value.retry_later and len(connected.stand_in.requests(path_prefix="/v1/products")) == 5


def test_a_refusal_names_the_param(connected: Connected) -> None:
    product = connected.client.create_product(PRODUCT, idempotency_key="push-9:product")
    with pytest.raises(PlatformRejected) as raised:  # a KWD amount whose last digit is not 0
        connected.client.create_price(PriceParams("kwd", 1235, None), product_id=product.id,
                                      idempotency_key="push-9:price")
    assert raised.value.param == "unit_amount" and raised.value.status == 400 and "1235" in raised.value.message
    assert len(connected.stand_in.requests(path_prefix="/v1/prices")) == 1


def test_an_expired_token_then_a_refresh(connected: Connected) -> None:
    connected.stand_in.expire_access_tokens()
    with pytest.raises(PlatformUnauthorized) as raised:
        connected.client.create_product(PRODUCT, idempotency_key="push-10:product")
    assert raised.value.code == "api_key_expired"
    refreshed = connected.oauth.refresh(connected.grant.refresh_token)
    created = connected.client.with_access_token(refreshed.access_token).create_product(
        PRODUCT, idempotency_key="push-10:product")
    assert created.id.startswith("prod_")


def test_deauthorize(connected: Connected) -> None:
    connected.oauth.deauthorize(connected.grant.account_id)
    with pytest.raises(PlatformUnauthorized):
        connected.client.create_product(PRODUCT, idempotency_key="push-11:product")
    with pytest.raises(InvalidGrant):
        connected.oauth.refresh(connected.grant.refresh_token)
    with pytest.raises(OAuthRejected) as raised:
        connected.oauth.deauthorize(connected.grant.account_id)
    assert raised.value.code == "invalid_client"


def test_an_end_date_in_the_past_still_gives_a_future_expiry(connected: Connected) -> None:
    plan = plan_push(_quote((_line(),), end_date=date(2020, 1, 1), start_date=None), datetime.now(UTC))
    _, quote = _push(connected.client, plan, "push-12")
    [request] = connected.stand_in.requests(path_prefix="/v1/quotes")
    assert request.status == 200 and int(request.form["expires_at"]) > datetime.now(UTC).timestamp()
    assert "effective_date" not in request.form.get("subscription_data", {})
