"""``Idempotency-Key`` on the dispatcher's POSTs (the shared middleware on the dispatcher's own
table; keys checked by the real api): a retried registration creates one endpoint and replays its
answer without the secret (shown once: null, with a ``secretShownOnce`` notice); another body is 422; keys are per organization; refusals for the API key
keep nothing; a test delivery retried with its key is sent once; the document shows the header."""

from __future__ import annotations

from uuid import UUID

from sqlalchemy import func, select

from dps_common.openapi.components import inline_refs

from dps_webhooks.db.models import WebhookDelivery, WebhookEndpoint
from dps_webhooks.db.models.idempotency import IDEMPOTENCY_KEYS

BASE = "/external/v1/webhook-configs"
URL = "https://127.0.0.1:8443/hooks"


def keyed(member, key: str) -> dict[str, str]:
    return {**member.headers, "Idempotency-Key": key}


def count(tx, model, org) -> int:
    with tx() as session:
        return session.scalar(select(func.count()).select_from(model).where(model.organization_id == UUID(org.id)))


def kept(tx, org) -> list[str]:
    with tx() as session:
        return list(session.scalars(select(IDEMPOTENCY_KEYS.c.key).where(IDEMPOTENCY_KEYS.c.organization_id == UUID(org.id))))


def test_a_retried_registration_creates_one_endpoint_and_replays_no_secret(client, org, tx):
    body = {"url": URL, "eventTypes": ["quote.approved"]}
    first = client.simulate_post(BASE, json=body, headers=keyed(org.admin, "register-erp"))
    retry = client.simulate_post(BASE, json=body, headers=keyed(org.admin, "register-erp"))
    assert first.status_code == retry.status_code == 201
    assert retry.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert first.json["secret"].startswith("whsec_") and first.json["secret"] not in retry.text
    replayed = retry.json
    notice = replayed.pop("secretShownOnce")
    assert replayed == {**first.json, "secret": None}
    assert notice["renewal"] == f"POST /webhook-configs/{first.json['id']}/rotate-secret"
    assert count(tx, WebhookEndpoint, org) == 1


def test_the_same_key_with_another_body_is_422(client, org, tx):
    client.simulate_post(BASE, json={"url": URL}, headers=keyed(org.admin, "k"))
    other = client.simulate_post(BASE, json={"url": URL + "/2"}, headers=keyed(org.admin, "k"))
    assert other.status_code == 422 and other.json["code"] == "idempotency_key_reused"
    assert other.headers["content-type"] == "application/problem+json"
    assert count(tx, WebhookEndpoint, org) == 1


def test_keys_are_per_organization(client, org, other_org, tx):
    ours = client.simulate_post(BASE, json={"url": URL}, headers=keyed(org.admin, "shared"))
    theirs = client.simulate_post(BASE, json={"url": URL}, headers=keyed(other_org.admin, "shared"))
    assert ours.status_code == theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs.headers and theirs.json["id"] != ours.json["id"]
    assert theirs.json["secret"] != ours.json["secret"]


def test_refusals_for_the_api_key_or_scope_keep_nothing_and_a_bad_key_is_400(client, org, tx):
    body = {"url": URL}
    assert client.simulate_post(BASE, json=body, headers={"Idempotency-Key": "k-auth"}).status_code == 401
    assert client.simulate_post(BASE, json=body, headers=keyed(org.viewer, "k-auth")).status_code == 403
    bad = client.simulate_post(BASE, json=body, headers=keyed(org.admin, "x" * 256))
    assert bad.status_code == 400 and bad.json["code"] == "invalid_idempotency_key"
    assert kept(tx, org) == [] and count(tx, WebhookEndpoint, org) == 0
    assert client.simulate_post(BASE, json=body, headers=keyed(org.admin, "k-auth")).status_code == 201


def test_a_retried_test_delivery_is_queued_once(client, org, tx):
    endpoint = client.simulate_post(BASE, json={"url": URL}, headers=org.admin.headers).json
    send = f"{BASE}/{endpoint['id']}/test"
    first = client.simulate_post(send, headers=keyed(org.admin, "ping-1"))
    retry = client.simulate_post(send, headers=keyed(org.admin, "ping-1"))
    assert first.status_code == retry.status_code == 202
    assert retry.json == first.json and retry.headers["Idempotent-Replayed"] == "true"
    with tx() as session:
        deliveries = session.scalar(
            select(func.count()).select_from(WebhookDelivery).where(WebhookDelivery.endpoint_id == UUID(endpoint["id"]))
        )
    assert deliveries == 1


def test_the_document_gives_every_post_the_header_and_the_409_and_422(client):
    doc = inline_refs(client.simulate_get("/external/v1/openapi.json").json)
    posts = [(path, item["post"]) for path, item in doc["paths"].items() if "post" in item]
    assert len(posts) >= 4
    for path, op in posts:
        assert "Idempotency-Key" in [p["name"] for p in op["parameters"]], path
        assert {"409", "422"} <= set(op["responses"]), path
