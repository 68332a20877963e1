"""``POST/GET /pricing-quotes``: pricing on create, roles, organization scoping, validation, events."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from dps_api.db.models.quotes import Quote, QuoteLine

from quote_helpers import (
    QUOTES,
    create_quote,
    error_fields,
    events,
    opportunity,
    pricebook,
    product,
    quote_body,
    simple_quote,
)


def count(tx, model) -> int:
    with tx() as session:
        return session.scalar(select(func.count()).select_from(model))


def catalog(client, org) -> dict[str, dict]:
    return {
        "seat": product(client, org, prices={"USD": "100.00"}),
        "platform": product(client, org, priceModel="FLAT", priceFrequency="ANNUAL", prices={"USD": "12000.00"}),
        "onboarding": product(client, org, priceModel="ONE_TIME_FEE", prices={"USD": "5000.00"}, shortName="Onb"),
        "api": product(
            client,
            org,
            priceModel="TIERED",
            prices={"USD": "20.00"},
            tiers={"USD": [{"upTo": "10", "unitPrice": "20.00"}, {"upTo": "100", "unitPrice": "15.00"}, {"upTo": None, "unitPrice": "10.00"}]},
        ),
    }


def test_create_prices_every_line_to_the_billing_period_and_totals_the_contract(client, org, tx):
    items = catalog(client, org)
    body = quote_body(
        {"productId": items["seat"]["id"], "quantity": "10", "discountPercent": "15"},
        {"productId": items["platform"]["id"], "netUnitPrice": "10800", "customName": "Platform (annual)"},
        {"productId": items["onboarding"]["id"]},
        {"productId": items["api"]["id"], "quantity": "25"},
        billingFrequency="QUARTERLY",
        subscriptionTermMonths=24,
        startDate="2027-01-01",
        endDate="2028-12-31",
    )
    quote = create_quote(client, org.user, body)

    assert quote["status"] == "DRAFT" and quote["ownerUserId"] == str(org.user.user_id)
    assert (quote["currency"], quote["billingFrequency"], quote["subscriptionTermMonths"]) == ("USD", "QUARTERLY", 24)
    assert (quote["startDate"], quote["endDate"]) == ("2027-01-01", "2028-12-31")
    assert quote["pricebookId"] is None and quote["pricebookVersion"] is None and quote["lineCount"] == 4
    seat, platform, onboarding, api = quote["lines"]
    assert [line["position"] for line in quote["lines"]] == [1, 2, 3, 4]
    assert (seat["listUnitPrice"], seat["discountPercent"], seat["netUnitPrice"]) == ("100.00", "15.0000", "85.00")
    assert seat["amountPerBillingPeriod"] == "2550.00" and seat["oneTimeAmount"] is None  # 85 x 10 x 3 months
    assert (platform["discountPercent"], platform["netUnitPrice"]) == ("10.0000", "10800.00")
    assert platform["amountPerBillingPeriod"] == "2700.00"  # 10800 a year, billed quarterly
    assert platform["customName"] == "Platform (annual)" and platform["quantity"] == "1"
    assert onboarding["oneTimeAmount"] == "5000.00" and onboarding["amountPerBillingPeriod"] is None
    assert onboarding["productShortName"] == "Onb" and onboarding["priceFrequency"] == "ONE_TIME"
    assert api["listUnitPrice"] == "15.00" and api["amountPerBillingPeriod"] == "1125.00"  # the 11..100 tier
    assert seat["productId"] == items["seat"]["id"] and seat["productVersion"] == 1
    assert seat["productSpecId"] == items["seat"]["specId"] and seat["productName"] == "Seat licence"
    assert quote["totals"] == {
        "recurringPerBillingPeriod": "6375.00",
        "oneTime": "5000.00",
        "totalContractValue": "56000.00",  # 6375 x 8 quarters + 5000
        "listTotalContractValue": "62000.00",  # (3000 + 3000 + 1125) x 8 + 5000
        "maxDiscountPercent": "15.0000",
    }
    assert quote["lockedBelowList"] is False
    assert client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.viewer.headers).json == quote


@pytest.mark.parametrize(("currency", "annual", "monthly"), [("JPY", "100006", "8334"), ("USD", "100006.00", "8333.83"), ("KWD", "100.006", "8.334")])
def test_amounts_round_half_up_to_the_currencys_minor_units(client, org, currency, annual, monthly):
    item = product(client, org, priceFrequency="ANNUAL", prices={currency: annual})
    quote = create_quote(client, org.user, quote_body({"productId": item["id"]}, currency=currency))
    assert quote["lines"][0]["amountPerBillingPeriod"] == monthly
    assert quote["totals"]["recurringPerBillingPeriod"] == monthly


def test_a_quote_without_lines_has_zero_totals(client, org):
    quote = create_quote(client, org.user, quote_body(currency="KWD"))
    assert quote["lines"] == [] and quote["lineCount"] == 0
    assert quote["totals"]["totalContractValue"] == "0.000" and quote["totals"]["maxDiscountPercent"] == "0.0000"


def test_create_writes_quote_created_with_the_rendered_quote(client, org, tx):
    quote = simple_quote(client, org)
    [event] = events(tx, org.id, "quote.created")
    assert event["data"] == quote and event["organizationId"] == str(org.id)


def test_an_opportunity_of_the_organization_can_be_linked(client, org):
    opp = opportunity(client, org)
    assert simple_quote(client, org, opportunityId=opp["id"])["opportunityId"] == opp["id"]


def test_viewer_reads_but_cannot_create(client, org, tx):
    quote = simple_quote(client, org)
    assert client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.viewer.headers).status_code == 200
    resp = client.simulate_post(QUOTES, json=quote_body(), headers=org.viewer.headers)
    assert resp.status_code == 403 and resp.json["requiredScope"] == "quotes:write"
    assert "quotes:write" in resp.json["detail"]
    assert count(tx, Quote) == 1


def test_users_create_for_themselves_admins_for_any_user_of_the_organization(client, org, other_org, tx):
    resp = client.simulate_post(QUOTES, json=quote_body(ownerUserId=str(org.admin.user_id)), headers=org.user.headers)
    assert resp.status_code == 403 and resp.json["code"] == "not_quote_owner"
    mine = create_quote(client, org.user, quote_body(ownerUserId=str(org.user.user_id)))
    assert mine["ownerUserId"] == str(org.user.user_id)
    for_user = create_quote(client, org.admin, quote_body(ownerUserId=str(org.user.user_id)))
    assert for_user["ownerUserId"] == str(org.user.user_id)
    resp = client.simulate_post(QUOTES, json=quote_body(ownerUserId=str(other_org.user.user_id)), headers=org.admin.headers)
    assert resp.status_code == 400 and resp.json["code"] == "unknown_reference"
    assert error_fields(resp) == ["ownerUserId"]
    assert count(tx, Quote) == 2


def test_another_organizations_quote_is_404(client, org, other_org):
    quote = simple_quote(client, org)
    line_id = quote["lines"][0]["id"]
    headers = other_org.admin.headers
    assert client.simulate_get(f"{QUOTES}/{quote['id']}", headers=headers).status_code == 404
    assert client.simulate_patch(f"{QUOTES}/{quote['id']}", json={"name": "x"}, headers=headers).status_code == 404
    resp = client.simulate_post(f"{QUOTES}/{quote['id']}/lines", json={"productId": quote["lines"][0]["productId"]}, headers=headers)
    assert resp.status_code == 404
    line = f"{QUOTES}/{quote['id']}/lines/{line_id}"
    assert client.simulate_patch(line, json={"quantity": "2"}, headers=headers).status_code == 404
    assert client.simulate_delete(line, headers=headers).status_code == 404
    assert client.simulate_get(f"{QUOTES}/not-a-uuid", headers=org.user.headers).status_code == 404
    assert client.simulate_delete(f"{QUOTES}/{quote['id']}/lines/not-a-uuid", headers=org.user.headers).status_code == 404
    other_quote = simple_quote(client, org)  # a line id of another quote of the same organization
    resp = client.simulate_delete(f"{QUOTES}/{other_quote['id']}/lines/{line_id}", headers=org.admin.headers)
    assert resp.status_code == 404 and resp.json["detail"] == "Quote line not found."
    body = client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.user.headers).json
    assert body == quote  # nothing changed


def test_references_to_another_organizations_objects_are_400_naming_the_field(client, org, other_org, tx):
    foreign_product = product(client, other_org)
    foreign_opp = opportunity(client, other_org)
    foreign_book = pricebook(client, other_org, "USD", {foreign_product["id"]: "90.00"})
    mine = product(client, org)
    cases = [
        (quote_body({"productId": mine["id"]}, {"productId": foreign_product["id"]}), "lines[1].productId"),
        (quote_body(opportunityId=foreign_opp["id"]), "opportunityId"),
        (quote_body(pricebookId=foreign_book["id"]), "pricebookId"),
    ]
    for body, field in cases:
        resp = client.simulate_post(QUOTES, json=body, headers=org.admin.headers)
        assert resp.status_code == 400, resp.json
        assert resp.json["code"] == "unknown_reference" and error_fields(resp) == [field]
        assert resp.json["detail"].startswith(field)
    assert count(tx, Quote) == 0 and count(tx, QuoteLine) == 0
    assert events(tx, org.id, "quote.created") == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": None}, "name"),
        ({"currency": "usd"}, "currency"),
        ({"currency": "ABC"}, "currency"),
        ({"currency": "XAU"}, "currency"),
        ({"currency": None}, "currency"),
        ({"billingFrequency": "WEEKLY"}, "billingFrequency"),
        ({"subscriptionTermMonths": 0}, "subscriptionTermMonths"),
        ({"subscriptionTermMonths": 121}, "subscriptionTermMonths"),
        ({"subscriptionTermMonths": "12"}, "subscriptionTermMonths"),
        ({"startDate": "2027-02-01", "endDate": "2027-01-31"}, "endDate"),
        ({"startDate": "01/02/2027"}, "startDate"),
        ({"opportunityId": "nope"}, "opportunityId"),
        ({"lines": [{"quantity": "1"}]}, "lines[0].productId"),
        ({"lines": [{"productId": "PRODUCT", "quantity": "0"}]}, "lines[0].quantity"),
        ({"lines": [{"productId": "PRODUCT", "quantity": "-2"}]}, "lines[0].quantity"),
        ({"lines": [{"productId": "PRODUCT", "quantity": "ten"}]}, "lines[0].quantity"),
        ({"lines": [{"productId": "PRODUCT", "quantity": 3}]}, "lines[0].quantity"),
        ({"lines": [{"productId": "PRODUCT"}, {"productId": "PRODUCT", "discountPercent": "5", "netUnitPrice": "90"}]}, "lines[1].netUnitPrice"),
        ({"lines": [{"productId": "PRODUCT", "discountPercent": "100.5"}]}, "lines[0].discountPercent"),
        ({"lines": [{"productId": "PRODUCT", "discountPercent": "-1"}]}, "lines[0].discountPercent"),
        ({"lines": [{"productId": "PRODUCT", "netUnitPrice": "-0.01"}]}, "lines[0].netUnitPrice"),
        ({"lines": [{"productId": "PRODUCT", "customName": ""}]}, "lines[0].customName"),
        ({"lines": "PRODUCT"}, "lines"),
    ],
)
def test_invalid_bodies_are_400_naming_the_field_and_write_nothing(client, org, tx, change, field):
    item = product(client, org)
    body = quote_body(**change)
    if isinstance(body["lines"], list):
        body["lines"] = [{**line, "productId": item["id"]} if line.get("productId") == "PRODUCT" else line for line in body["lines"]]
    for key in [k for k, v in change.items() if v is None]:
        body[key] = None
    resp = client.simulate_post(QUOTES, json=body, headers=org.user.headers)
    assert resp.status_code == 400, resp.json
    assert field in error_fields(resp), resp.json
    assert count(tx, Quote) == 0 and events(tx, org.id, "quote.created") == []


def test_catalog_refusals_name_the_line(client, org, tx):
    euro_only = product(client, org, prices={"EUR": "10.00"})
    inactive = product(client, org, active=False)
    for item, code in ((euro_only, "no_price_in_currency"), (inactive, "product_inactive")):
        resp = client.simulate_post(QUOTES, json=quote_body({"productId": item["id"]}), headers=org.user.headers)
        assert resp.status_code == 400 and resp.json["code"] == code
        assert error_fields(resp) == ["lines[0].productId"]
    assert count(tx, Quote) == 0


def test_unknown_fields_are_dropped(client, org):
    quote = create_quote(client, org.user, quote_body(status="APPROVED", totals={"oneTime": "1"}, organizationId="x"))
    assert quote["status"] == "DRAFT" and quote["totals"]["oneTime"] == "0.00"
