"""The event catalogue: every event the api writes is declared, and its envelope validates against
the schema the OpenAPI document's ``webhooks`` section gives its type; nothing undeclared is written."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import uuid4

import jsonschema_rs
import pytest

from dps_common.events.catalogue import UnknownEventType
from dps_common.openapi.components import inline_refs

from dps_api.adapters.outbox import OUTBOX
from dps_api.schemas.events import EVENTS

from approval_helpers import (
    DISCOUNT_ABOVE_10,
    V1,
    approval_group,
    decide,
    post,
    product,
    quote,
    recall,
    rule,
    step,
    submit,
)
from quote_helpers import edit_pricebook, edit_product, events, opportunity, pricebook


def _document(client) -> dict:
    return client.simulate_get(f"{V1}/openapi.json").json


def _validator(document: dict, event_type: str) -> jsonschema_rs.Validator:
    schema = document["webhooks"][event_type]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return jsonschema_rs.Draft202012Validator({**schema, "components": document["components"]})


def test_the_document_lists_every_declared_event_type_as_a_webhook(client):
    webhooks = inline_refs(_document(client))["webhooks"]
    assert set(webhooks) == {event.name for event in EVENTS}
    for name, item in webhooks.items():
        headers = {p["name"] for p in item["post"]["parameters"]}
        assert {"X-Service-Event-Id", "X-Service-Delivery-Id", "X-Service-Attempt", "webhook-signature"} <= headers, name


def test_every_event_written_matches_its_documented_schema(client, tx, org):
    """A day of an organization: catalog, opportunity, deal group, approval configuration, quotes
    submitted, approved, rejected, recalled and reopened, configuration deleted."""
    seat = product(client, org, name="Seat")
    edit_product(client, org, seat["id"], name="Seat licence")
    book = pricebook(client, org, "USD", {seat["id"]: "90.00"})
    edit_pricebook(client, org, book["id"], name="Book 2027")
    deal = opportunity(client, org)
    assert client.simulate_patch(f"{V1}/opportunities/{deal['id']}", json={"name": "Bigger deal"},
                                 headers=org.admin.headers).status_code == 200
    group = post(client, org.admin, f"{V1}/deal-groups", {"name": "Renewals", "opportunityIds": [deal["id"]]})
    assert client.simulate_patch(f"{V1}/deal-groups/{group['id']}", json={"name": "Renewals 2027"},
                                 headers=org.admin.headers).status_code == 200
    approvers = approval_group(client, org, [org.admin])
    first = step(client, org, "Finance", 1)
    discount_rule = rule(client, org, approvers, DISCOUNT_ABOVE_10, first)

    approved = quote(client, org.user, seat["id"], discount="20")
    approval = submit(client, org.user, approved["id"])
    assert decide(client, org.admin, approval["id"]).status_code == 200
    assert client.simulate_patch(f"{V1}/pricing-quotes/{approved['id']}", json={"name": "Initech renewal v2"},
                                 headers=org.user.headers).status_code == 200  # reopened
    rejected = quote(client, org.user, seat["id"], discount="20")
    approval = submit(client, org.user, rejected["id"])
    assert decide(client, org.admin, approval["id"], "reject").status_code == 200
    recalled = quote(client, org.user, seat["id"], discount="20")
    submit(client, org.user, recalled["id"])
    assert recall(client, org.user, recalled["id"]).status_code in (200, 204)
    assert client.simulate_post(f"{V1}/opportunities/{deal['id']}/closed-won", headers=org.admin.headers).status_code == 200
    assert client.simulate_delete(f"{V1}/approval-rules/{discount_rule['id']}", headers=org.admin.headers).status_code == 204
    assert client.simulate_delete(f"{V1}/approval-rule-groups/{first['id']}", headers=org.admin.headers).status_code == 204

    document = _document(client)
    written = events(tx, org.id)
    for envelope in written:
        errors = [error.message for error in _validator(document, envelope["type"]).iter_errors(envelope)]
        assert not errors, (envelope["type"], errors)
    broken = {**written[0], "data": {**written[0]["data"], "id": 7}}
    assert list(_validator(document, broken["type"]).iter_errors(broken))  # the schemas do check
    seen = {envelope["type"] for envelope in written}
    missing = {event.name for event in EVENTS} - seen
    # the rest (a vote on a several-vote step, group and rule updates) share the schemas checked here
    assert missing <= {"approval.vote_recorded", "approval_group.updated", "approval_rule.updated",
                       "approval_rule_group.updated"}, missing


def test_an_undeclared_event_type_is_refused_before_anything_is_written(tx):
    with pytest.raises(UnknownEventType, match="quote.exploded"), tx() as session:
        OUTBOX.record(session, {}, uuid4(), datetime.now(UTC), "quote.exploded")
