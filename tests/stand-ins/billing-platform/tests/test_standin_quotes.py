"""Draft quotes: line items of existing prices, one currency, one interval, at most 20 lines."""

from __future__ import annotations

import time
from typing import Any

import pytest
import requests

from dps_billing_stand_in import BillingStandIn

from billing_stand_in_helpers import Api, error_of, price, product


def _future(seconds: int = 86400) -> int:
    return int(time.time()) + seconds


def test_a_draft_quote_in_stripes_shape(api: Api, stand_in: BillingStandIn, grant: dict[str, Any]) -> None:
    monthly, setup = price(api, amount=1500), price(api, amount=5000, interval=None)
    expires, starts = _future(30 * 86400), _future(7 * 86400)
    answer = api.post(
        "/v1/quotes",
        {
            "line_items[0][price]": monthly, "line_items[0][quantity]": "3",
            "line_items[1][price]": setup,
            "description": "Acme renewal", "expires_at": str(expires),
            "subscription_data[effective_date]": str(starts),
            "subscription_data[metadata][service_subscription_terms_months]": "12",
            "metadata[service_pricing_quote_id]": "q-1",
        },
    )
    assert answer.status_code == 200, answer.text
    quote = answer.json()
    assert quote["id"].startswith("qt_") and quote["object"] == "quote" and quote["status"] == "draft"
    assert quote["currency"] == "usd" and quote["customer"] is None
    assert quote["amount_total"] == 3 * 1500 + 5000
    assert quote["computed"]["recurring"]["amount_total"] == 4500
    assert quote["computed"]["recurring"]["interval"] == "month"
    assert quote["expires_at"] == expires and quote["description"] == "Acme renewal"
    assert quote["subscription_data"]["effective_date"] == starts
    assert quote["subscription_data"]["metadata"] == {"service_subscription_terms_months": "12"}
    assert quote["metadata"] == {"service_pricing_quote_id": "q-1"}
    assert quote["application"] == stand_in.config.client_id
    assert "line_items" not in quote  # as in Stripe: only when expanded

    items = api.get(f"/v1/quotes/{quote['id']}/line_items").json()
    assert [(i["price"]["id"], i["quantity"], i["amount_total"]) for i in items["data"]] == [
        (monthly, 3, 4500), (setup, 1, 5000)
    ]
    expanded = api.get(f"/v1/quotes/{quote['id']}", {"expand[0]": "line_items"}).json()
    assert expanded["line_items"]["data"] == items["data"]
    [kept] = stand_in.objects("quote")
    assert kept["line_items"]["data"] == items["data"]


def test_a_quote_without_expires_at_expires_in_30_days(api: Api) -> None:
    quote = api.post("/v1/quotes", {"line_items[0][price]": price(api)}).json()
    assert quote["expires_at"] - quote["created"] == 30 * 86400


def _quote(api: Api, **fields: str) -> requests.Response:
    return api.post("/v1/quotes", {"line_items[0][price]": price(api), **fields})


@pytest.mark.parametrize(
    ("fields", "code", "param"),
    [
        ({"line_items[0][price]": "price_missing"}, "resource_missing", "line_items[0][price]"),
        ({"line_items[0][quantity]": "0"}, None, "line_items[0][quantity]"),
        ({"line_items[0][quantity]": "1.5"}, "parameter_invalid_integer", "line_items[0][quantity]"),
        ({"line_items[0][colour]": "red"}, "parameter_unknown", "line_items[0][colour]"),
        ({"line_items[1][quantity]": "2"}, "parameter_missing", "line_items[1][price]"),
        ({"line_items[2][price]": "price_x"}, None, "line_items"),
        ({"expires_at": "100"}, None, "expires_at"),
        ({"expires_at": "tomorrow"}, "parameter_invalid_integer", "expires_at"),
        ({"description": "d" * 501}, None, "description"),
        ({"subscription_data[effective_date]": "100"}, None, "subscription_data[effective_date]"),
        ({"subscription_data[metadata][" + "k" * 41 + "]": "v"}, None,
         "subscription_data[metadata][" + "k" * 41 + "]"),
        ({"subscription_data[colour]": "red"}, "parameter_unknown", "subscription_data[colour]"),
        ({"customer": "cus_missing"}, "resource_missing", "customer"),
        ({"expand[0]": "customer"}, None, "expand[0]"),
    ],
)
def test_quote_validation(api: Api, fields: dict[str, str], code: str | None, param: str) -> None:
    error = error_of(_quote(api, **fields), 400)
    assert error.get("code") == code
    assert error["param"] == param
    assert api.get("/v1/quotes").json()["data"] == []


def test_the_description_limit_itself_is_accepted(api: Api) -> None:
    assert _quote(api, description="d" * 500).status_code == 200


def test_all_prices_share_one_currency(api: Api) -> None:
    answer = api.post("/v1/quotes", {"line_items[0][price]": price(api), "line_items[1][price]": price(api, "eur")})
    assert "same currency" in error_of(answer, 400)["message"]


def test_recurring_prices_share_one_interval(api: Api) -> None:
    lines = {"line_items[0][price]": price(api), "line_items[1][price]": price(api, interval=None),
             "line_items[2][price]": price(api, interval="month", count=3)}
    error = error_of(api.post("/v1/quotes", lines), 400)
    assert "same billing interval" in error["message"] and error["param"] == "line_items[2][price]"
    yearly = {"line_items[0][price]": price(api), "line_items[1][price]": price(api, interval="year")}
    assert error_of(api.post("/v1/quotes", yearly), 400)["param"] == "line_items[1][price]"


def test_a_quote_holds_at_most_20_line_items(api: Api) -> None:
    one = price(api)
    twenty = {f"line_items[{n}][price]": one for n in range(20)}
    assert api.post("/v1/quotes", twenty).status_code == 200
    error = error_of(api.post("/v1/quotes", {**twenty, "line_items[20][price]": one}), 400)
    assert error["param"] == "line_items" and "at most 20" in error["message"]


def test_an_inactive_price_is_refused(api: Api) -> None:
    inactive = api.post("/v1/prices", {"currency": "usd", "product": product(api), "unit_amount": "1",
                                       "active": "false"}).json()["id"]
    assert "inactive" in error_of(api.post("/v1/quotes", {"line_items[0][price]": inactive}), 400)["message"]


def test_the_review_page_shows_the_draft(api: Api, stand_in: BillingStandIn) -> None:
    quote = _quote(api, description="Acme <renewal>", **{"metadata[service_pricing_quote_id]": "q-9"}).json()
    for url in (stand_in.review_url(quote["id"]), f"{stand_in.dashboard_url}/test/quotes/{quote['id']}"):
        page = requests.get(url, timeout=10)
        assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html")
        assert quote["id"] in page.text and "Acme &lt;renewal&gt;" in page.text and "q-9" in page.text
    assert requests.get(stand_in.review_url("qt_missing"), timeout=10).status_code == 404
