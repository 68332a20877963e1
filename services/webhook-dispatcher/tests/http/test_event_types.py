"""The event catalogue: ``GET /webhook-event-types`` (admin keys, every type with its payload schema
and an example valid under it), and a webhook config's eventTypes held to it on create and update
(an unknown name is a 400 naming the field and the value, with the closest known type), as the
OpenAPI document says (the items' ``enum``)."""

from __future__ import annotations

import jsonschema_rs
import pytest
from sqlalchemy import func, select

from dps_common.openapi.components import inline_refs

from dps_webhooks.db.models import WebhookEndpoint

BASE = "/external/v1/webhook-configs"
TYPES = "/external/v1/webhook-event-types"
URL = "https://127.0.0.1:8443/hooks"


def catalogue(client, org) -> list[dict]:
    resp = client.simulate_get(TYPES, headers=org.admin.headers)
    assert resp.status_code == 200, resp.json
    assert set(resp.json) == {"eventTypes"}
    return resp.json["eventTypes"]


def endpoints(tx) -> int:
    with tx() as session:
        return session.scalar(select(func.count()).select_from(WebhookEndpoint))


def test_the_catalogue_lists_every_customer_event_with_a_schema_and_a_valid_example(client, org):
    entries = catalogue(client, org)
    names = [entry["type"] for entry in entries]
    assert names == sorted(names) and len(set(names)) == len(names)
    assert {"quote.approved", "quote.aproved"} & set(names) == {"quote.approved"}
    assert {"product.created", "opportunity.closed_won", "approval.approved", "deal_group.updated",
            "billing.quote_pushed", "billing.push_failed", "billing.connection.removed"} <= set(names)
    assert not [name for name in names if name.startswith("internal.") or name == "webhook.test"]
    for entry in entries:
        assert set(entry) == {"type", "description", "schema", "example"}, entry["type"]
        assert entry["description"], entry["type"]
        validator = jsonschema_rs.Draft202012Validator(entry["schema"])
        assert not [e.message for e in validator.iter_errors(entry["example"])], entry["type"]
        assert entry["example"]["type"] == entry["type"]
        wrong = {**entry["example"], "type": "quote.exploded" if entry["type"] != "quote.exploded" else "x.y"}
        assert list(validator.iter_errors(wrong)), entry["type"]  # the schema pins the type: it does check


def test_the_catalogue_is_for_admin_keys_only(client, org):
    for member in (org.user, org.viewer):
        resp = client.simulate_get(TYPES, headers=member.headers)
        assert resp.status_code == 403 and resp.json["requiredScope"] == "webhooks:manage"
    assert client.simulate_get(TYPES).status_code == 401


def test_the_document_gives_the_catalogue_as_the_enum_of_event_types_and_documents_the_operation(client, org):
    doc = client.simulate_get("/external/v1/openapi.json").json
    names = [entry["type"] for entry in catalogue(client, org)]
    schemas = doc["components"]["schemas"]
    for model in ("WebhookConfigCreate", "WebhookConfigUpdate"):
        prop = inline_refs(doc)["components"]["schemas"][model]["properties"]["eventTypes"]
        items = next(option for option in prop.get("anyOf", [prop]) if option.get("type") == "array")["items"]
        assert items["enum"] == names, model
    operation = doc["paths"]["/webhook-event-types"]["get"]
    assert operation["x-required-scopes"] == ["webhooks:manage"]
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert answer == {"$ref": "#/components/schemas/WebhookEventTypeList"}
    listed = schemas["WebhookEventTypeList"]["properties"]["eventTypes"]["items"]["$ref"].rsplit("/", 1)[1]
    assert set(schemas[listed]["properties"]) == {"type", "description", "schema", "example"}


def test_a_misspelt_event_type_is_refused_on_create_naming_field_value_and_the_closest_type(client, org, tx):
    before = endpoints(tx)
    resp = client.simulate_post(BASE, json={"url": URL, "eventTypes": ["quote.approved", "quote.aproved"]},
                                headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert resp.json["code"] == "validation_error"
    [error] = resp.json["errors"]
    assert error["field"] == "eventTypes[1]"
    assert "'quote.aproved'" in error["message"] and "did you mean 'quote.approved'?" in error["message"]
    assert "eventTypes[1]" in resp.json["detail"] and "quote.aproved" in resp.json["detail"]
    assert endpoints(tx) == before


def test_a_name_like_no_known_type_is_refused_with_the_known_types(client, org, tx):
    before = endpoints(tx)
    resp = client.simulate_post(BASE, json={"url": URL, "eventTypes": ["order.shipped"]}, headers=org.admin.headers)
    assert resp.status_code == 400
    [error] = resp.json["errors"]
    assert error["field"] == "eventTypes[0]" and "'order.shipped'" in error["message"]
    assert "quote.approved" in error["message"] and "billing.quote_pushed" in error["message"]
    assert endpoints(tx) == before


@pytest.mark.parametrize("name", ["webhook.test", "internal.api_key.revoked", "billing.quote_push"])
def test_an_update_to_an_unknown_event_type_is_refused_and_changes_nothing(client, org, name):
    created = client.simulate_post(BASE, json={"url": URL, "eventTypes": ["billing.quote_pushed"]},
                                   headers=org.admin.headers).json
    resp = client.simulate_put(f"{BASE}/{created['id']}", json={"eventTypes": ["quote.created", name]},
                               headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert [e["field"] for e in resp.json["errors"]] == ["eventTypes[1]"]
    assert repr(name) in resp.json["errors"][0]["message"] or name.startswith("internal.")
    got = client.simulate_get(f"{BASE}/{created['id']}", headers=org.admin.headers).json
    assert got["eventTypes"] == ["billing.quote_pushed"]


def test_every_catalogued_type_is_accepted(client, org):
    names = [entry["type"] for entry in catalogue(client, org)]
    resp = client.simulate_post(BASE, json={"url": URL, "eventTypes": names}, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    assert resp.json["eventTypes"] == names
