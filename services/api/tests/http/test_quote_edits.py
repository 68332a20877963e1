"""``PATCH /pricing-quotes/{id}``: ownership, status rules, re-pricing on currency or pricebook
changes, and pinning (catalog changes after creation never alter a quote)."""

from __future__ import annotations

import uuid

import pytest

from dps_api.adapters.outbox import OUTBOX
from dps_api.services.quote_approval import change_quote_status

from quote_helpers import (
    QUOTES,
    create_quote,
    edit_pricebook,
    edit_product,
    error_fields,
    events,
    opportunity,
    pricebook,
    product,
    quote_body,
    quote_events,
    simple_quote,
)


def patch(client, member, quote_id: str, **fields):
    return client.simulate_patch(f"{QUOTES}/{quote_id}", json=fields, headers=member.headers)


STATUS_EVENTS = {"PENDING_APPROVAL": "quote.submitted", "APPROVED": "quote.approved", "REJECTED": "quote.rejected"}


def set_status(app, org, quote_id: str, status: str) -> None:
    """As the approvals work does it."""
    with app.context.tx() as session:
        change_quote_status(OUTBOX, session, org.id, uuid.UUID(quote_id), status, app.context.now(), STATUS_EVENTS[status])


def get(client, org, quote_id: str) -> dict:
    return client.simulate_get(f"{QUOTES}/{quote_id}", headers=org.viewer.headers).json


def test_owner_edits_the_header_and_amounts_follow_the_billing_period(client, org, tx):
    quote = simple_quote(client, org)  # 100.00 a month
    resp = patch(client, org.user, quote["id"], name="Renamed", billingFrequency="ANNUAL", subscriptionTermMonths=36)
    assert resp.status_code == 200, resp.json
    edited = resp.json
    assert edited["name"] == "Renamed" and edited["status"] == "DRAFT"
    assert edited["lines"][0]["amountPerBillingPeriod"] == "1200.00"
    assert edited["totals"]["recurringPerBillingPeriod"] == "1200.00"
    assert edited["totals"]["totalContractValue"] == "3600.00"
    assert edited["updatedAt"] > quote["updatedAt"] and edited["createdAt"] == quote["createdAt"]
    [event] = events(tx, org.id, "quote.updated")
    assert event["data"] == edited == get(client, org, quote["id"])


def test_dates_opportunity_and_clearing_nullable_fields(client, org, other_org):
    opp = opportunity(client, org)
    quote = simple_quote(client, org, startDate="2027-01-01", opportunityId=opp["id"])
    resp = patch(client, org.user, quote["id"], endDate="2026-12-31")
    assert resp.status_code == 400 and error_fields(resp) == ["endDate"]
    foreign = opportunity(client, other_org)
    resp = patch(client, org.user, quote["id"], opportunityId=foreign["id"])
    assert resp.status_code == 400 and resp.json["code"] == "unknown_reference" and error_fields(resp) == ["opportunityId"]
    for field, value in (("name", None), ("currency", None), ("subscriptionTermMonths", 0), ("billingFrequency", "DAILY")):
        resp = patch(client, org.user, quote["id"], **{field: value})
        assert resp.status_code == 400 and error_fields(resp) == [field], field
    resp = patch(client, org.user, quote["id"], opportunityId=None, startDate=None, endDate="2026-12-31")
    assert resp.status_code == 200
    assert (resp.json["opportunityId"], resp.json["startDate"], resp.json["endDate"]) == (None, None, "2026-12-31")


def test_users_edit_only_their_own_quotes_admins_any(client, org, tx):
    admins = simple_quote(client, org, member=org.admin)
    resp = patch(client, org.user, admins["id"], name="Mine now")
    assert resp.status_code == 403 and resp.json["code"] == "not_quote_owner"
    other_user = org.member("user", "second@acme.example")
    users = simple_quote(client, org)
    assert patch(client, other_user, users["id"], name="x").json["code"] == "not_quote_owner"
    resp = patch(client, org.user, users["id"], ownerUserId=str(other_user.user_id))
    assert resp.status_code == 403 and resp.json["code"] == "not_quote_owner"
    assert get(client, org, admins["id"]) == admins and get(client, org, users["id"]) == users
    resp = patch(client, org.admin, users["id"], name="By admin", ownerUserId=str(other_user.user_id))
    assert resp.status_code == 200 and resp.json["ownerUserId"] == str(other_user.user_id)
    assert patch(client, other_user, users["id"], name="Handed over").status_code == 200
    resp = patch(client, org.viewer, users["id"], name="x")
    assert resp.status_code == 403 and resp.json["requiredScope"] == "quotes:write"
    assert [e["data"]["name"] for e in events(tx, org.id, "quote.updated")] == ["By admin", "Handed over"]


def test_a_patch_that_changes_nothing_writes_nothing_and_keeps_the_status(client, org, app, tx):
    quote = simple_quote(client, org)
    set_status(app, org, quote["id"], "APPROVED")
    resp = patch(client, org.user, quote["id"], name=quote["name"], currency="USD")
    assert resp.status_code == 200 and resp.json["status"] == "APPROVED"
    assert resp.json["updatedAt"] == get(client, org, quote["id"])["updatedAt"]
    assert quote_events(tx, org.id, quote["id"]) == ["quote.created", "quote.approved"]


@pytest.mark.parametrize("status", ["APPROVED", "REJECTED"])
def test_editing_a_decided_quote_returns_it_to_draft(client, org, app, tx, status):
    quote = simple_quote(client, org)
    set_status(app, org, quote["id"], status)
    resp = patch(client, org.user, quote["id"], subscriptionTermMonths=24)
    assert resp.status_code == 200 and resp.json["status"] == "DRAFT"
    assert quote_events(tx, org.id, quote["id"]) == ["quote.created", STATUS_EVENTS[status], "quote.updated", "quote.reopened"]
    reopened = events(tx, org.id, "quote.reopened")[0]
    assert reopened["data"]["status"] == "DRAFT" and reopened["data"] == resp.json


def test_a_quote_pending_approval_cannot_be_edited(client, org, app, tx):
    quote = simple_quote(client, org)
    line = f"{QUOTES}/{quote['id']}/lines/{quote['lines'][0]['id']}"
    set_status(app, org, quote["id"], "PENDING_APPROVAL")
    for resp in (
        patch(client, org.admin, quote["id"], name="x"),
        client.simulate_post(f"{QUOTES}/{quote['id']}/lines", json={"productId": quote["lines"][0]["productId"]}, headers=org.user.headers),
        client.simulate_patch(line, json={"quantity": "2"}, headers=org.user.headers),
        client.simulate_delete(line, headers=org.user.headers),
    ):
        assert resp.status_code == 409 and resp.json["code"] == "quote_pending_approval"
    assert get(client, org, quote["id"])["lines"] == quote["lines"]
    assert quote_events(tx, org.id, quote["id"]) == ["quote.created", "quote.submitted"]


def test_changing_currency_reprices_lines_at_their_pinned_versions_keeping_discounts(client, org):
    item = product(client, org, prices={"USD": "100.00", "EUR": "90.00"})
    quote = create_quote(client, org.user, quote_body({"productId": item["id"], "quantity": "2", "netUnitPrice": "75"}))
    assert quote["lines"][0]["discountPercent"] == "25.0000"
    edit_product(client, org, item["id"], listPrices={"USD": "110.00", "EUR": "99.00"})  # version 2
    resp = patch(client, org.user, quote["id"], currency="EUR")
    assert resp.status_code == 200, resp.json
    [line] = resp.json["lines"]
    assert line["productVersion"] == 1 and line["listUnitPrice"] == "90.00"
    assert (line["discountPercent"], line["netUnitPrice"], line["amountPerBillingPeriod"]) == ("25.0000", "67.50", "135.00")
    assert resp.json["currency"] == "EUR" and resp.json["totals"]["recurringPerBillingPeriod"] == "135.00"


def test_a_currency_the_pinned_products_lack_is_refused_and_nothing_changes(client, org, tx):
    quote = simple_quote(client, org)
    resp = patch(client, org.user, quote["id"], currency="GBP")
    assert resp.status_code == 400 and resp.json["code"] == "no_price_in_currency" and error_fields(resp) == ["currency"]
    resp = patch(client, org.user, quote["id"], currency="XXX")
    assert resp.status_code == 400 and error_fields(resp) == ["currency"]
    assert get(client, org, quote["id"]) == quote
    assert quote_events(tx, org.id, quote["id"]) == ["quote.created"]


def test_pricebook_prices_are_pinned_at_creation(client, org):
    item = product(client, org, prices={"USD": "100.00"})
    book = pricebook(client, org, "USD", {item["id"]: "80.00"}, assigned=[org.user])
    body = quote_body({"productId": item["id"], "discountPercent": "5"}, pricebookId=book["id"])
    del body["currency"]  # defaults to the pricebook's
    quote = create_quote(client, org.user, body)
    assert (quote["pricebookId"], quote["pricebookVersion"], quote["currency"]) == (book["id"], 1, "USD")
    assert quote["lines"][0]["listUnitPrice"] == "80.00" and quote["lines"][0]["netUnitPrice"] == "76.00"

    edit_pricebook(client, org, book["id"], entries=[{"productId": item["id"], "unitPrice": "70.00"}])
    edit_product(client, org, item["id"], listPrices={"USD": "120.00"}, name="Seat licence v2")
    assert get(client, org, quote["id"]) == quote  # catalog changes never reach an existing quote

    # a line added later pins the product's current version, priced by the quote's pinned pricebook version
    resp = client.simulate_post(f"{QUOTES}/{quote['id']}/lines", json={"productId": item["id"]}, headers=org.user.headers)
    assert resp.status_code == 201, resp.json
    added = resp.json["lines"][1]
    assert (added["productVersion"], added["productName"], added["listUnitPrice"]) == (2, "Seat licence v2", "80.00")
    assert resp.json["pricebookVersion"] == 1
    # sending the same pricebook keeps the pin; switching to none re-prices at list prices of the pinned versions
    assert patch(client, org.user, quote["id"], pricebookId=book["id"]).json["pricebookVersion"] == 1
    resp = patch(client, org.user, quote["id"], pricebookId=None)
    assert resp.status_code == 200 and resp.json["pricebookId"] is None and resp.json["pricebookVersion"] is None
    assert [line["listUnitPrice"] for line in resp.json["lines"]] == ["100.00", "120.00"]
    assert resp.json["lines"][0]["discountPercent"] == "5.0000"


def test_switching_pricebook_pins_its_latest_version_and_checks_the_currency(client, org):
    item = product(client, org, prices={"USD": "100.00", "EUR": "95.00"})
    usd = pricebook(client, org, "USD", {item["id"]: "80.00"})
    edit_pricebook(client, org, usd["id"], entries=[{"productId": item["id"], "unitPrice": "85.00"}])
    eur = pricebook(client, org, "EUR", {item["id"]: "70.00"})
    quote = create_quote(client, org.admin, quote_body({"productId": item["id"]}))
    resp = patch(client, org.admin, quote["id"], pricebookId=usd["id"])
    assert (resp.json["pricebookVersion"], resp.json["lines"][0]["listUnitPrice"]) == (2, "85.00")
    resp = patch(client, org.admin, quote["id"], pricebookId=eur["id"])
    assert resp.status_code == 400 and resp.json["code"] == "pricebook_currency_mismatch" and error_fields(resp) == ["pricebookId"]
    resp = patch(client, org.admin, quote["id"], currency="EUR")
    assert resp.status_code == 400 and resp.json["code"] == "pricebook_currency_mismatch" and error_fields(resp) == ["currency"]
    resp = patch(client, org.admin, quote["id"], currency="EUR", pricebookId=eur["id"])
    assert resp.status_code == 200 and resp.json["lines"][0]["listUnitPrice"] == "70.00"
    create_body = quote_body(pricebookId=usd["id"], currency="EUR")
    resp = client.simulate_post(QUOTES, json=create_body, headers=org.admin.headers)
    assert resp.status_code == 400 and resp.json["code"] == "pricebook_currency_mismatch"


def test_pricebooks_need_an_assignment_and_must_be_active(client, org):
    item = product(client, org)
    unassigned = pricebook(client, org, "USD", {item["id"]: "80.00"})
    inactive = pricebook(client, org, "USD", {item["id"]: "80.00"}, assigned=[org.user], active=False)
    resp = client.simulate_post(QUOTES, json=quote_body(pricebookId=unassigned["id"]), headers=org.user.headers)
    assert resp.status_code == 403 and resp.json["code"] == "pricebook_not_assigned"
    resp = client.simulate_post(QUOTES, json=quote_body(pricebookId=inactive["id"]), headers=org.user.headers)
    assert resp.status_code == 409 and resp.json["code"] == "pricebook_inactive"
    quote = simple_quote(client, org)
    resp = patch(client, org.user, quote["id"], pricebookId=unassigned["id"])
    assert resp.status_code == 403 and resp.json["code"] == "pricebook_not_assigned"
    # admins may use any pricebook
    assert create_quote(client, org.admin, quote_body(pricebookId=unassigned["id"]))["pricebookId"] == unassigned["id"]


def test_a_line_above_list_keeps_its_markup_when_the_currency_changes(client, org):
    """A net price above list shows as a negative discount; re-pricing keeps that percent (it was a 500)."""
    item = product(client, org, prices={"USD": "100.00", "EUR": "90.00"})
    quote = create_quote(client, org.user, quote_body({"productId": item["id"], "quantity": "1", "netUnitPrice": "120"}))
    assert quote["lines"][0]["discountPercent"] == "-20.0000"
    resp = patch(client, org.user, quote["id"], currency="EUR")
    assert resp.status_code == 200, resp.json
    [line] = resp.json["lines"]
    assert (line["listUnitPrice"], line["netUnitPrice"], line["discountPercent"]) == ("90.00", "108.00", "-20.0000")
