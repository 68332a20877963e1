"""Spec section 6, the event types delivered to endpoints: the catalogue the dispatcher keeps (it
imports no other service's code) is exactly what the api and the connector publish, as their own
OpenAPI documents give their ``webhooks``: the same types, descriptions and payload schemas. A type
added, renamed or reshaped by a publisher fails here until the dispatcher's copy follows
(``python tests/contract/contract_events.py <api document> <connector document>``)."""

from __future__ import annotations

import jsonschema_rs
import requests
from contract_events import published

from contract_client import Api


def _document(origin: str, ca_file: str) -> dict:
    resp = requests.get(f"{origin}/internal/v1/openapi.json", verify=ca_file, timeout=10)
    assert resp.status_code == 200
    return resp.json()


def test_the_dispatchers_catalogue_is_what_the_api_and_the_connector_publish(server, webhooks_server, billing_server,
                                                                             tls_files, org):
    expected = published(_document(server, tls_files["ca"])) | published(_document(billing_server, tls_files["ca"]))
    assert {"quote.approved", "approval.approved", "billing.quote_pushed"} <= set(expected)
    served = Api(webhooks_server, tls_files["ca"]).ok("GET", "/webhook-event-types", org.admin)["eventTypes"]
    assert [entry["type"] for entry in served] == sorted(expected)
    for entry in served:
        assert {"description": entry["description"], "schema": entry["schema"]} == expected[entry["type"]], entry["type"]
        assert not list(jsonschema_rs.Draft202012Validator(entry["schema"]).iter_errors(entry["example"])), entry["type"]


def test_an_endpoint_subscribes_only_to_catalogued_types(webhooks_server, tls_files, org):
    webhooks = Api(webhooks_server, tls_files["ca"])
    resp = webhooks.post("/webhook-configs", org.admin, json={"url": "https://hooks.example.com/dps",
                                                             "eventTypes": ["quote.aproved"]})
    assert resp.status_code == 400
    [error] = resp.json()["errors"]
    assert error["field"] == "eventTypes[0]" and "quote.approved" in error["message"]
