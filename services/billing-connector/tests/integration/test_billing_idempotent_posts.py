"""``Idempotency-Key`` on the connector's POSTs, at its integration level: the connector on a real
socket over committed data (its own database), connected to the billing platform stand-in, keys
checked by the fake api. A retried push request replays its first answer (202 and its Location),
where an unkeyed repeat answers 200; the key is bound to its path and to its organization; a retried
authorize replays its answer without the start URL (its ticket is a secret, shown once: neither the
kept answer nor any other row holds one, so nothing read from the tables opens a connect flow); the
platform's signed webhooks (public) ignore the header."""

from __future__ import annotations

import re
from uuid import UUID

import orjson
import pytest
import requests
from sqlalchemy import create_engine, select, text

from dps_common.db import Transactions, sqlalchemy_url
from dps_common.openapi.components import inline_refs
from dps_testing.services import fresh_database

from dps_billing.db.migrate import upgrade
from dps_billing.db.models import OAuthState
from dps_billing.db.models.idempotency import IDEMPOTENCY_KEYS

from billing_helpers import connect, line, quote

V1 = "/external/v1"
AUTHORIZE = "/billing-connection/authorize"


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


def stored_text(tx: Transactions, organization_id: UUID) -> str:
    """Everything the connector keeps of the organization's connect flows and keyed answers, as text:
    the kept answers (status, headers, body) and the flows' rows (the ticket's hash in hex)."""
    kept_rows = select(IDEMPOTENCY_KEYS).where(IDEMPOTENCY_KEYS.c.organization_id == organization_id)
    flows = select(OAuthState).where(OAuthState.organization_id == organization_id)
    with tx.read() as session:
        answers = [" ".join(bytes(value).decode(errors="replace") if isinstance(value, bytes | memoryview)
                            else orjson.dumps(value, default=str).decode() for value in row)
                   for row in session.execute(kept_rows)]
        hashes = [(flow.ticket_hash or b"").hex() for flow in session.scalars(flows)]
    return "\n".join([*answers, *hashes])


def start(served: str, ticket: str) -> requests.Response:
    return requests.get(f"{served}{V1}/billing-connection/start", params={"ticket": ticket},
                        allow_redirects=False, timeout=10)


def test_a_retried_authorize_replays_its_answer_without_the_ticket(served, org, committed_tx):
    first = post(served, AUTHORIZE, org.admin.key, "auth-1")
    retry = post(served, AUTHORIZE, org.admin.key, "auth-1")
    other = post(served, AUTHORIZE, org.admin.key, "auth-2")
    assert first.status_code == retry.status_code == other.status_code == 200
    ticket = first.json()["startUrl"].split("ticket=", 1)[1]
    assert retry.headers["Idempotent-Replayed"] == "true" and ticket not in retry.text
    replayed = retry.json()
    notice = replayed.pop("secretShownOnce")
    assert replayed == {**first.json(), "startUrl": None}
    assert notice == {"fields": ["startUrl"], "detail": notice["detail"], "renewal": "POST /billing-connection/authorize"}
    assert "shown once" in notice["detail"]
    assert other.json()["startUrl"] not in (None, first.json()["startUrl"])  # a new key: a new flow, a new ticket
    assert kept(committed_tx, org.id) == [("auth-1", 200), ("auth-2", 200)]
    assert ticket not in stored_text(committed_tx, org.id)
    assert start(served, ticket).status_code == 303  # the first answer's ticket, shown once, works once


def test_nothing_read_from_the_tables_opens_a_connect_flow(served, org, committed_tx):
    first = post(served, AUTHORIZE, org.admin.key, "auth-steal")
    assert first.status_code == 200
    stored = stored_text(committed_tx, org.id)
    # what someone reading the tables could try as a ticket: any ticket in a kept answer, each flow's hash
    candidates = re.findall(r"ticket=([A-Za-z0-9_%-]+)", stored) + re.findall(r"^[0-9a-f]{64}$", stored, re.M)
    assert candidates
    assert {start(served, candidate).status_code for candidate in candidates} == {400}
    assert start(served, first.json()["startUrl"].split("ticket=", 1)[1]).status_code == 303


def test_the_document_says_the_start_url_is_shown_once(served):
    doc = requests.get(f"{served}{V1}/openapi.json", timeout=10).json()
    op = doc["paths"][AUTHORIZE]["post"]
    assert "shown once" in op["description"] and "secretShownOnce" in op["description"]
    refs = [ref["$ref"] for ref in op["responses"]["200"]["content"]["application/json"]["schema"]["oneOf"]]
    assert refs == ["#/components/schemas/AuthorizeLink", "#/components/schemas/AuthorizeLinkReplayed"]
    replayed = doc["components"]["schemas"]["AuthorizeLinkReplayed"]
    assert replayed["properties"]["startUrl"]["type"] == "null"
    assert {"startUrl", "expiresAt", "secretShownOnce"} <= set(replayed["required"])


_KEEP = text(
    "INSERT INTO idempotency_keys (organization_id, client_key_id, key, claim_id, request_method, request_path, "
    "request_fingerprint, created_at, expires_at, response_status, response_headers, response_body) "
    "VALUES (gen_random_uuid(), 'key1', :key, gen_random_uuid(), 'POST', :path, repeat('0', 64), now(), "
    "now() + interval '1 day', 200, '{}', :body)"
)


def test_the_upgrade_forgets_the_start_urls_kept_before_it():
    with fresh_database("dps_billing_forget_tickets") as url:
        upgrade(url, "0006_push_request_id")
        engine = create_engine(sqlalchemy_url(url))
        try:
            with engine.begin() as connection:
                for key, path in (("a", f"{V1}{AUTHORIZE}"), ("p", f"{V1}/pricing-quotes/q/billing-pushes")):
                    body = b'{"startUrl": "https://c.test/start?ticket=secret"}' if key == "a" else b"{}"
                    connection.execute(_KEEP, {"key": key, "path": path, "body": body})
            upgrade(url)
            with engine.connect() as connection:
                left = connection.execute(text("SELECT key FROM idempotency_keys")).scalars().all()
        finally:
            engine.dispose()
    assert left == ["p"]


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
