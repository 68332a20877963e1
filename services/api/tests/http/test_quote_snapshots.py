"""``GET /internal/v1/organizations/{organizationId}/pricing-quotes/{quoteId}/snapshot``: the quote as
the billing connector reads it, behind the service token."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal
from pathlib import Path

import falcon.testing
import pytest

from dps_api.composition import build_http
from dps_api.domain.vocabulary import BillingFrequency, PriceFrequency, PriceModel, QuoteStatus

from quote_helpers import API, QUOTES, create_quote, product, quote_body

TOKEN = "snapshot-token-0123456789abcdef0123456789abcdef"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
# the api writes it, the billing connector reads it (services/api/tests/unit/test_quote_snapshot_contract.py)
CONTRACT_EXAMPLE = Path(__file__).resolve().parents[4] / "tests" / "contract" / "fixtures" / "quote_snapshot.json"


def url(organization_id, quote_id) -> str:
    return f"/internal/v1/organizations/{organization_id}/pricing-quotes/{quote_id}/snapshot"


@pytest.fixture
def client(settings, tx):
    return falcon.testing.TestClient(build_http(settings.model_copy(update={"internal_api_token": TOKEN}), tx=tx))


@pytest.fixture
def quarterly(client, org) -> dict:
    """Billed quarterly: 3 seats of a 100.00 monthly product at 10 % off, and a one-time fee of 2 x 450."""
    resp = client.simulate_post(
        f"{API}/opportunities",
        json={"name": "Renewal", "accountName": "Initech", "crmId": "006-CRM-42"},
        headers=org.admin.headers,
    )
    assert resp.status_code == 201, resp.json
    seats = product(client, org, name="Seats", prices={"USD": "100.00"})
    fee = product(client, org, name="Onboarding", priceModel="ONE_TIME_FEE", prices={"USD": "500.00"}, shortName="Onb")
    body = quote_body(
        {"productId": seats["id"], "quantity": "3", "discountPercent": "10"},
        {"productId": fee["id"], "quantity": "2", "netUnitPrice": "450", "customName": "Kick-off"},
        billingFrequency="QUARTERLY",
        subscriptionTermMonths=12,
        opportunityId=resp.json["id"],
        startDate="2027-01-01",
    )
    return create_quote(client, org.user, body)


def snapshot(client, org, quote) -> dict:
    resp = client.simulate_get(url(org.id, quote["id"]), headers=BEARER)
    assert resp.status_code == 200, resp.json
    return resp.json


def test_a_quarterly_quote_with_a_monthly_product_and_a_one_time_fee(client, org, quarterly):
    body = snapshot(client, org, quarterly)
    seats, fee = body["lines"]
    assert seats == {
        "id": quarterly["lines"][0]["id"],
        "position": 1,
        "productId": quarterly["lines"][0]["productId"],
        "productSpecId": quarterly["lines"][0]["productSpecId"],
        "productVersion": 1,
        "productName": "Seats",
        "productShortName": None,
        "customName": None,
        "priceModel": "PER_UNIT",
        "priceFrequency": "MONTHLY",
        "quantity": "3",
        "unitAmount": "270.00",  # 90.00 a month for one unit, three months a billing period
        "recurring": True,
        "amount": "810.00",
    }
    assert (fee["priceModel"], fee["priceFrequency"], fee["customName"], fee["productShortName"]) == (
        "ONE_TIME_FEE", "ONE_TIME", "Kick-off", "Onb"
    )
    assert (fee["quantity"], fee["unitAmount"], fee["recurring"], fee["amount"]) == ("2", "450.00", False, "900.00")
    assert body["totals"] == {"recurringPerBillingPeriod": "810.00", "oneTime": "900.00", "totalContractValue": "4140.00"}
    assert body["totals"]["totalContractValue"] == quarterly["totals"]["totalContractValue"]
    assert {k: body[k] for k in ("id", "organizationId", "name", "status", "ownerUserId", "opportunityCrmId")} == {
        "id": quarterly["id"],
        "organizationId": str(org.id),
        "name": "Initech renewal",
        "status": "DRAFT",
        "ownerUserId": str(org.user.user_id),
        "opportunityCrmId": "006-CRM-42",
    }
    assert (body["opportunityId"], body["currency"], body["billingFrequency"]) == (
        quarterly["opportunityId"], "USD", "QUARTERLY"
    )
    assert (body["subscriptionTermMonths"], body["startDate"], body["endDate"]) == (12, "2027-01-01", None)
    assert (body["pricebookId"], body["pricebookVersion"]) == (None, None)


def test_the_body_is_the_contract(client, org, quarterly):
    """The served body has the shape of the committed example the billing connector's tests read."""
    body = snapshot(client, org, quarterly)
    example = json.loads(CONTRACT_EXAMPLE.read_text())
    assert set(body) == set(example) and set(body["totals"]) == set(example["totals"])
    assert all(set(line) == set(example["lines"][0]) for line in body["lines"])
    assert (body["status"], body["billingFrequency"]) == (QuoteStatus.DRAFT.value, BillingFrequency.QUARTERLY.value)
    first = body["lines"][0]
    assert (first["priceModel"], first["priceFrequency"]) == (PriceModel.PER_UNIT.value, PriceFrequency.MONTHLY.value)
    # amounts add up to the totals, per billing period and once, as decimal strings
    totals = body["totals"]
    assert sum(Decimal(line["amount"]) for line in body["lines"] if line["recurring"]) == Decimal(
        totals["recurringPerBillingPeriod"]
    )
    assert sum(Decimal(line["amount"]) for line in body["lines"] if not line["recurring"]) == Decimal(totals["oneTime"])


def test_annual_products_on_a_monthly_quote(client, org):
    even = product(client, org, priceFrequency="ANNUAL", prices={"USD": "1200.00"})
    uneven = product(client, org, priceModel="FLAT", priceFrequency="ANNUAL", prices={"USD": "1000.00"})
    quote = create_quote(
        client,
        org.user,
        quote_body({"productId": even["id"]}, {"productId": uneven["id"], "quantity": "3"}, subscriptionTermMonths=24),
    )
    body = snapshot(client, org, quote)
    first, second = body["lines"]
    assert (first["unitAmount"], first["amount"], first["recurring"]) == ("100.00", "100.00", True)
    # 1000 a year is 83.33... a month: exact (not rounded to cents), as the pricing domain computes it
    assert second["unitAmount"].startswith("83.333333333333") and len(second["unitAmount"]) > 20
    assert abs(Decimal(second["unitAmount"]) * 12 - 1000) < Decimal("1e-40")
    assert second["amount"] == "250.00"
    assert body["totals"]["recurringPerBillingPeriod"] == "350.00"
    assert body["totals"]["totalContractValue"] == "8400.00" == quote["totals"]["totalContractValue"]
    assert (body["billingFrequency"], body["opportunityId"], body["opportunityCrmId"]) == ("MONTHLY", None, None)


def test_status_and_pricebook_follow_the_quote(client, org):
    item = product(client, org)
    book = client.simulate_post(
        f"{API}/pricebooks",
        json={"name": "Partners", "currency": "USD", "entries": [{"productId": item["id"], "unitPrice": "80.00"}]},
        headers=org.admin.headers,
    ).json
    quote = create_quote(client, org.admin, quote_body({"productId": item["id"]}, pricebookId=book["id"]))
    assert client.simulate_post(f"{QUOTES}/{quote['id']}/approval", headers=org.admin.headers).status_code == 201
    body = snapshot(client, org, quote)
    assert (body["status"], body["pricebookId"], body["pricebookVersion"]) == ("APPROVED", book["id"], quote["pricebookVersion"])
    assert body["lines"][0]["unitAmount"] == "80.00"


def test_another_organizations_quote_and_unknown_ids_are_404(client, org, other_org, quarterly):
    for organization_id, quote_id in (
        (other_org.id, quarterly["id"]),
        (org.id, uuid.uuid4()),
        (uuid.uuid4(), quarterly["id"]),
        ("not-a-uuid", quarterly["id"]),
        (org.id, "not-a-uuid"),
    ):
        resp = client.simulate_get(url(organization_id, quote_id), headers=BEARER)
        assert resp.status_code == 404, (organization_id, quote_id)
        assert resp.headers["content-type"].startswith("application/problem+json")
        assert resp.json["code"] == "not_found" and resp.json["status"] == 404


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}, {"x-api-key": "dps_x_y"}]
)
def test_callers_without_the_service_token_are_refused(client, org, quarterly, headers):
    resp = client.simulate_get(url(org.id, quarterly["id"]), headers=headers)
    assert resp.status_code == 401
    assert resp.json["code"] == "invalid_service_token"


def test_an_organizations_api_key_is_not_a_service_token(client, org, quarterly):
    resp = client.simulate_get(url(org.id, quarterly["id"]), headers=org.admin.headers)
    assert resp.status_code == 401


def test_not_served_without_a_configured_token_nor_documented(settings, tx, org, client, quarterly):
    plain = falcon.testing.TestClient(build_http(settings, tx=tx))
    assert plain.simulate_get(url(org.id, quarterly["id"]), headers=BEARER).status_code == 404
    for served in (plain, client):
        paths = served.simulate_get(f"{API}/openapi.json").json["paths"]
        assert not any("snapshot" in path or "internal" in path for path in paths)
