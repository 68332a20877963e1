"""``render_quote`` against the response models that document it (``PricingQuote``, ``QuoteSummary``),
on real quotes: the OpenAPI document and the JSON cannot drift apart."""

from __future__ import annotations

import uuid

import pytest

from dps_common.json import dumps, loads
from dps_common.paging import PageRequest

from dps_api.adapters.outbox import OUTBOX
from dps_api.schemas import quotes as quote_schemas
from dps_api.schemas.quotes import PricingQuote, QuoteSummary, render_quote
from dps_api.services.quotes import QuoteFilters, QuoteService

from quote_helpers import QUOTES, assert_documented, create_quote, events, opportunity, product, quote_body


@pytest.fixture
def service(app) -> QuoteService:
    return QuoteService(app.context.tx, app.context.now, OUTBOX)


@pytest.fixture
def quote(client, org) -> dict:
    """Every kind of line and every optional header field set."""
    tiered = product(
        client, org, priceModel="TIERED", tiers={"USD": [{"upTo": "10", "unitPrice": "9"}, {"upTo": None, "unitPrice": "7"}]}
    )
    fee = product(client, org, priceModel="ONE_TIME_FEE", prices={"USD": "500.00"}, shortName="Setup")
    annual = product(client, org, priceFrequency="ANNUAL", prices={"USD": "1200.00"})
    body = quote_body(
        {"productId": tiered["id"], "quantity": "12", "customName": "Seats"},
        {"productId": fee["id"], "netUnitPrice": "450"},
        {"productId": annual["id"], "discountPercent": "12.5"},
        billingFrequency="QUARTERLY",
        opportunityId=opportunity(client, org)["id"],
        startDate="2027-01-01",
        endDate="2027-12-31",
    )
    return create_quote(client, org.user, body)


def test_a_write_renders_its_quote_once_for_its_event_and_its_answer(client, tx, org, monkeypatch):
    """The outbox adapter renders the view for the write's events, and the answer is their data: a
    500-line rendering is not free. A write that records nothing renders its answer."""
    rendered = []
    render = quote_schemas.render_lines
    monkeypatch.setattr(quote_schemas, "render_lines", lambda lines, currency: rendered.append(len(lines)) or render(lines, currency))
    item = product(client, org)
    quote = create_quote(client, org.user, quote_body({"productId": item["id"]}))
    headers, path = org.user.headers, f"{QUOTES}/{quote['id']}"
    added = client.simulate_post(f"{path}/lines", json={"productId": item["id"]}, headers=headers)
    line = f"{path}/lines/{added.json['lines'][1]['id']}"
    assert client.simulate_patch(line, json={"quantity": "3"}, headers=headers).status_code == 200
    assert client.simulate_post(f"{path}/approval", headers=headers).status_code == 201  # no rule: APPROVED
    reopened = client.simulate_patch(path, json={"name": "Renamed"}, headers=headers)
    assert client.simulate_patch(path, json={"name": "Renamed"}, headers=headers).json == reopened.json  # no change
    assert rendered == [1, 2, 2, 2, 2, 2]
    [event] = events(tx, org.id, "quote.reopened")
    assert event["data"] == reopened.json == events(tx, org.id, "quote.updated")[-1]["data"]


def test_a_quote_with_its_lines_renders_as_a_pricing_quote(service, client, org, quote):
    view = service.get(_principal(client, org), uuid.UUID(quote["id"]))
    rendered = render_quote(view)
    assert_documented(PricingQuote, rendered)
    assert loads(dumps(rendered)) == quote == client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.viewer.headers).json


def test_a_list_item_renders_as_a_quote_summary(service, client, org, quote):
    [view] = service.list(_principal(client, org), QuoteFilters(), PageRequest(10, None))
    rendered = render_quote(view)
    assert "lines" not in rendered
    assert_documented(QuoteSummary, rendered)
    assert loads(dumps(rendered)) == {k: v for k, v in quote.items() if k != "lines"}


def test_an_empty_quote_without_optional_fields_renders_as_documented(service, client, org):
    created = create_quote(client, org.user, quote_body())
    assert_documented(PricingQuote, render_quote(service.get(_principal(client, org), uuid.UUID(created["id"]))))


def _principal(client, org):
    return client.app.context.authenticator.authenticate(org.user.key)
