"""Products and prices: shapes, strict validation, accounts kept apart."""

from __future__ import annotations

from typing import Any

import pytest
import requests
import stripe

from dps_billing_stand_in import BillingStandIn

from billing_stand_in_helpers import Api, connect, error_of, product


def test_a_product_is_created_in_stripes_shape_and_can_be_read_back(api: Api, grant: dict[str, Any]) -> None:
    answer = api.post("/v1/products", {"name": "Widget", "metadata[service_product_input_id]": "line-1"})
    assert answer.status_code == 200
    assert answer.headers["Request-Id"].startswith("req_")
    created = answer.json()
    assert created["id"].startswith("prod_") and len(created["id"]) == 19
    assert created["object"] == "product"
    assert created["livemode"] is False and created["active"] is True
    assert created["metadata"] == {"service_product_input_id": "line-1"}
    assert isinstance(created["created"], int)
    assert api.get(f"/v1/products/{created['id']}").json() == created


def test_lists_page_newest_first(api: Api) -> None:
    ids = [product(api, f"P{n}") for n in range(3)]
    first = api.get("/v1/products", {"limit": 2}).json()
    assert first["object"] == "list" and first["url"] == "/v1/products"
    assert [p["id"] for p in first["data"]] == [ids[2], ids[1]] and first["has_more"] is True
    rest = api.get("/v1/products", {"limit": 2, "starting_after": ids[1]}).json()
    assert [p["id"] for p in rest["data"]] == [ids[0]] and rest["has_more"] is False
    assert error_of(api.get("/v1/products", {"limit": 101}), 400)["param"] == "limit"
    assert error_of(api.get("/v1/products", {"colour": "red"}), 400)["code"] == "parameter_unknown"


def test_an_unknown_object_is_404_resource_missing(api: Api) -> None:
    error = error_of(api.get("/v1/prices/price_missing"), 404)
    assert error["code"] == "resource_missing" and error["type"] == "invalid_request_error"
    assert error["doc_url"] == "https://stripe.com/docs/error-codes/resource-missing"


def test_an_unknown_path_is_stripes_unrecognized_url(api: Api) -> None:
    error = error_of(api.post("/v1/customers", {"name": "x"}), 404)
    assert error["message"].startswith("Unrecognized request URL (POST: /v1/customers)")


@pytest.mark.parametrize(
    ("data", "code", "param"),
    [
        ({}, "parameter_missing", "name"),
        ({"name": ""}, "parameter_invalid_empty", "name"),
        ({"name": "x" * 5001}, None, "name"),
        ({"name": "x", "colour": "red"}, "parameter_unknown", "colour"),
        ({"name[first]": "x"}, None, "name"),
        ({"name": "x", "active": "yes"}, None, "active"),
        ({"name": "x", **{f"metadata[k{n}]": "v" for n in range(51)}}, None, "metadata"),
        ({"name": "x", "metadata[" + "k" * 41 + "]": "v"}, None, "metadata[" + "k" * 41 + "]"),
        ({"name": "x", "metadata[k]": "v" * 501}, None, "metadata[k]"),
        ({"name": "x", "metadata[a[b]]": "v"}, None, "metadata[a[b]]"),
    ],
)
def test_product_validation(api: Api, data: dict[str, str], code: str | None, param: str) -> None:
    error = error_of(api.post("/v1/products", data), 400)
    assert error["type"] == "invalid_request_error"
    assert error.get("code") == code
    assert error["param"] == param
    assert api.get("/v1/products").json()["data"] == []


def test_the_limits_themselves_are_accepted(api: Api) -> None:
    data = {"name": "x" * 5000, **{f"metadata[{'k' * 38}{n:02}]": "v" * 500 for n in range(50)}}
    answer = api.post("/v1/products", data)
    assert answer.status_code == 200, answer.text
    assert len(answer.json()["metadata"]) == 50


def test_an_unknown_parameter_names_itself_as_stripe_does(api: Api) -> None:
    error = error_of(api.post("/v1/products", {"name": "x", "foo": "1"}), 400)
    assert error["message"] == "Received unknown parameter: foo"


def test_an_empty_metadata_value_sets_nothing(api: Api) -> None:
    answer = api.post("/v1/products", {"name": "x", "metadata[a]": "", "metadata[b]": "1"})
    assert answer.json()["metadata"] == {"b": "1"}


def _price(api: Api, **fields: Any) -> requests.Response:
    return api.post("/v1/prices", {"currency": "usd", "product": product(api), "unit_amount": 100, **fields})


def test_a_recurring_and_a_one_time_price(api: Api) -> None:
    recurring = _price(api, **{"recurring[interval]": "month", "recurring[interval_count]": "3"}).json()
    assert recurring["id"].startswith("price_") and recurring["object"] == "price"
    assert recurring["type"] == "recurring" and recurring["unit_amount"] == 100
    assert recurring["recurring"]["interval"] == "month" and recurring["recurring"]["interval_count"] == 3
    one_time = _price(api).json()
    assert one_time["type"] == "one_time" and one_time["recurring"] is None


@pytest.mark.parametrize(
    ("fields", "code", "param"),
    [
        ({"currency": None}, "parameter_missing", "currency"),
        ({"currency": "USD"}, None, "currency"),
        ({"currency": "xyz"}, None, "currency"),
        ({"product": None}, "parameter_missing", "product"),
        ({"product": "prod_missing"}, "resource_missing", "product"),
        ({"unit_amount": None}, "parameter_missing", "unit_amount"),
        ({"unit_amount": "-1"}, None, "unit_amount"),
        ({"unit_amount": "12.5"}, "parameter_invalid_integer", "unit_amount"),
        ({"unit_amount_decimal": "12.5"}, "parameters_exclusive", "unit_amount"),
        ({"recurring": "month"}, None, "recurring"),
        ({"recurring[interval_count]": "1"}, "parameter_missing", "recurring[interval]"),
        ({"recurring[interval]": "fortnight"}, None, "recurring[interval]"),
        ({"recurring[interval]": "month", "recurring[interval_count]": "0"}, None, "recurring[interval_count]"),
        ({"recurring[interval]": "month", "recurring[colour]": "x"}, "parameter_unknown", "recurring[colour]"),
        ({"tax_behavior": "sometimes"}, None, "tax_behavior"),
    ],
)
def test_price_validation(api: Api, fields: dict[str, str | None], code: str | None, param: str) -> None:
    data: dict[str, Any] = {"currency": "usd", "product": product(api), "unit_amount": "100"}
    for name, value in fields.items():
        if value is None:
            data.pop(name)
        else:
            data[name] = value
    error = error_of(api.post("/v1/prices", data), 400)
    assert error.get("code") == code
    assert error["param"] == param
    assert api.get("/v1/prices").json()["data"] == []


@pytest.mark.parametrize(("interval", "most"), [("day", 1095), ("week", 156), ("month", 36), ("year", 3)])
def test_a_price_bills_at_most_every_three_years(api: Api, interval: str, most: int) -> None:
    fields = {"recurring[interval]": interval}
    assert _price(api, **fields, **{"recurring[interval_count]": str(most)}).status_code == 200
    error = error_of(_price(api, **fields, **{"recurring[interval_count]": str(most + 1)}), 400)
    assert error["param"] == "recurring[interval_count]"


@pytest.mark.parametrize("currency", ["bhd", "jod", "kwd", "omr", "tnd"])
def test_three_decimal_currencies_need_a_last_digit_of_zero(api: Api, currency: str) -> None:
    assert _price(api, currency=currency, unit_amount="1230").status_code == 200
    error = error_of(_price(api, currency=currency, unit_amount="1235"), 400)
    assert error["param"] == "unit_amount"


def test_zero_decimal_and_decimal_amounts_are_taken_as_sent(api: Api) -> None:
    assert _price(api, currency="jpy", unit_amount="1235").json()["unit_amount"] == 1235
    data = {"currency": "usd", "product": product(api), "unit_amount_decimal": "1234.5"}
    created = api.post("/v1/prices", data).json()
    assert created["unit_amount"] is None and created["unit_amount_decimal"] == "1234.5"


def test_accounts_see_only_their_own_objects(stand_in: BillingStandIn, api: Api) -> None:
    other = Api(stand_in.api_url, connect(stand_in)["access_token"])
    mine = product(api)
    assert error_of(other.get(f"/v1/products/{mine}"), 404)["code"] == "resource_missing"
    data = {"currency": "usd", "product": mine, "unit_amount": 1}
    assert error_of(other.post("/v1/prices", data), 400)["code"] == "resource_missing"
    assert other.get("/v1/products").json()["data"] == []


def test_the_stripe_package_works_against_it(client: stripe.StripeClient, stand_in: BillingStandIn) -> None:
    created = client.v1.products.create(params={"name": "Widget", "metadata": {"k": "v"}})
    price = client.v1.prices.create(
        params={"currency": "eur", "product": created.id, "unit_amount": 995,
                "recurring": {"interval": "year", "interval_count": 1}}
    )
    assert client.v1.prices.retrieve(price.id).unit_amount == 995
    with pytest.raises(stripe.InvalidRequestError) as caught:
        client.v1.prices.create(params={"currency": "eur", "product": created.id, "unit_amount": -5})
    assert caught.value.param == "unit_amount" and caught.value.http_status == 400
    recorded = stand_in.requests(path="/v1/prices", method="POST")[0]
    assert recorded.form == {"currency": "eur", "product": created.id, "unit_amount": "995",
                             "recurring": {"interval": "year", "interval_count": "1"}}
    assert recorded.status == 200 and recorded.response["id"] == price.id
    assert b"recurring[interval]=year" in recorded.raw_body.replace(b"%5B", b"[").replace(b"%5D", b"]")
    assert recorded.idempotency_key is not None  # the package sends one on every POST
    assert stand_in.objects("price")[0]["id"] == price.id


def test_requests_without_a_valid_key_are_401(stand_in: BillingStandIn) -> None:
    assert "did not provide an API key" in error_of(requests.post(stand_in.api_url + "/v1/products"), 401)["message"]
    unknown = requests.get(stand_in.api_url + "/v1/products", headers={"Authorization": "Bearer sk_test_nope1234"})
    error = error_of(unknown, 401)
    assert error["type"] == "invalid_request_error" and error["message"].endswith("1234")


def test_the_apps_secret_key_works_by_basic_auth_on_its_own_account(stand_in: BillingStandIn) -> None:
    answer = requests.post(stand_in.api_url + "/v1/products", data={"name": "x"}, auth=(stand_in.config.secret_key, ""))
    assert answer.status_code == 200
    assert stand_in.objects("product", stand_in.config.platform_account)[0]["id"] == answer.json()["id"]


def test_a_json_body_is_refused(api: Api) -> None:
    answer = api.post("/v1/products", json={"name": "x"})
    assert "form-encoded" in error_of(answer, 400)["message"]
