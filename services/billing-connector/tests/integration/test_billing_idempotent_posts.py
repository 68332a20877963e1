"""``Idempotency-Key`` on the connector's POSTs, at its integration level: the connector on a real
socket over committed data (its own database), connected to the billing platform stand-in, keys
checked by the fake api. A retried push request replays its first answer (202 and its Location),
where an unkeyed repeat answers 200; the key is bound to its path and to its organization; a retried
authorize returns the same one-use state; the platform's signed webhooks (public) ignore the header."""

from __future__ import annotations

from uuid import UUID

import pytest
import requests
from sqlalchemy import select

from dps_common.db import Transactions
from dps_common.openapi.components import inline_refs

from dps_billing.db.models.idempotency import IDEMPOTENCY_KEYS

from billing_helpers import connect, line, quote

V1 = "/external/v1"


@pytest.fixture
def org(served, fake_api, stand_in):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    return org


def post(served: str, path: str, api_key: str, idempotency_key: str | None = None) -> requests.Response:
    headers = {"x-api-key": api_key}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = idempotency_key
    return requests.post(f"{served}{V1}{path}", headers=headers, timeout=10)


def kept(tx: Transactions, organization_id: UUID) -> list[tuple[str, int | None]]:
    query = select(IDEMPOTENCY_KEYS.c.key, IDEMPOTENCY_KEYS.c.response_status).where(
        IDEMPOTENCY_KEYS.c.organization_id == organization_id
    )
    with tx.read() as session:
        return sorted((row.key, row.response_status) for row in session.execute(query))


def test_a_retried_push_request_replays_the_202_and_its_location(served, fake_api, org, committed_tx):
    snapshot = quote(org.id, org.user.user_id, [line()])
    fake_api.put_quote(snapshot)
    path = f"/pricing-quotes/{snapshot.id}/billing-pushes"
    first = post(served, path, org.admin.key, "push-1")
    retry = post(served, path, org.admin.key, "push-1")
    unkeyed = post(served, path, org.admin.key)

    assert first.status_code == retry.status_code == 202
    assert retry.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert retry.headers["Location"] == first.headers["Location"]
    assert retry.json() == first.json()
    assert unkeyed.status_code == 200 and unkeyed.json()["id"] == first.json()["id"]  # the same push, read again
    assert kept(committed_tx, org.id) == [("push-1", 202)]


def test_the_key_is_bound_to_its_path_and_its_organization(served, fake_api, org, stand_in):
    first_quote, second_quote = (quote(org.id, org.user.user_id, [line()]) for _ in range(2))
    for snapshot in (first_quote, second_quote):
        fake_api.put_quote(snapshot)
    assert post(served, f"/pricing-quotes/{first_quote.id}/billing-pushes", org.admin.key, "k").status_code == 202
    reused = post(served, f"/pricing-quotes/{second_quote.id}/billing-pushes", org.admin.key, "k")
    assert reused.status_code == 422 and reused.json()["code"] == "idempotency_key_reused"
    assert reused.headers["content-type"] == "application/problem+json"

    stranger = fake_api.organization()
    connect(served, stranger.admin.key, stand_in.install())
    theirs = quote(stranger.id, stranger.user.user_id, [line()])
    fake_api.put_quote(theirs)
    answer = post(served, f"/pricing-quotes/{theirs.id}/billing-pushes", stranger.admin.key, "k")
    assert answer.status_code == 202 and "Idempotent-Replayed" not in answer.headers


def test_a_retried_authorize_returns_the_same_state_and_a_new_key_a_new_one(served, org):
    first = post(served, "/billing-connection/authorize", org.admin.key, "auth-1")
    retry = post(served, "/billing-connection/authorize", org.admin.key, "auth-1")
    other = post(served, "/billing-connection/authorize", org.admin.key, "auth-2")
    assert first.status_code == retry.status_code == other.status_code == 200
    assert retry.json() == first.json() and retry.headers["Idempotent-Replayed"] == "true"
    assert other.json() != first.json()


def test_refusals_for_the_api_key_or_scope_keep_nothing(served, org, committed_tx):
    assert post(served, "/billing-connection/authorize", "dps_nope_nope", "k-auth").status_code == 401
    assert post(served, "/billing-connection/authorize", org.viewer.key, "k-auth").status_code == 403
    assert post(served, "/billing-connection/authorize", org.admin.key, "\x7f").status_code == 400
    assert kept(committed_tx, org.id) == []


def test_the_document_gives_keyed_posts_the_header_and_public_ones_not(served):
    doc = inline_refs(requests.get(f"{served}{V1}/openapi.json", timeout=10).json())
    posts = {path: item["post"] for path, item in doc["paths"].items() if "post" in item}
    for path, op in posts.items():
        documented = "Idempotency-Key" in [p["name"] for p in op["parameters"]]
        assert documented == bool(op["security"]), path  # public operations need no API key, and take no key
        if documented:
            assert {"409", "422"} <= set(op["responses"]), path
    assert any(not op["security"] for op in posts.values()) and any(op["security"] for op in posts.values())
