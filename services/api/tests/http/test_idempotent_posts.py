"""``Idempotency-Key`` on the api's POSTs (beyond the spec; Stripe's design and the IETF draft):
one run per organization and key, its answer replayed for 24 hours with ``Idempotent-Replayed:
true``; another request under the key is 422; requests refused before execution (a malformed key,
401, 403, a body refused by its schema) and conflicts keep nothing. Retries while the first runs
(409) are in tests/integration/test_idempotent_races.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, update

from dps_common.auth.authenticator import INVALID_KEY
from dps_common.openapi.components import inline_refs

from dps_api.db.models.idempotency import IDEMPOTENCY_KEYS
from dps_api.db.models.quotes import Quote

from quote_helpers import API, QUOTES, events, product, quote_body

OPPORTUNITIES = f"{API}/opportunities"


def quotes_of(tx, org) -> int:
    with tx() as session:
        return session.scalar(select(func.count()).select_from(Quote).where(Quote.organization_id == org.id))


def kept_keys(tx, org) -> list[tuple[str, int | None]]:
    with tx() as session:
        rows = session.execute(
            select(IDEMPOTENCY_KEYS.c.key, IDEMPOTENCY_KEYS.c.response_status).where(
                IDEMPOTENCY_KEYS.c.organization_id == org.id
            )
        )
        return sorted((row.key, row.response_status) for row in rows)


def keyed(member, key: str) -> dict[str, str]:
    return {**member.headers, "Idempotency-Key": key}


def a_quote_body(client, org) -> dict:
    return quote_body({"productId": product(client, org)["id"], "quantity": "3"})


def test_a_retry_with_the_same_key_creates_no_second_quote_and_gets_the_first_answer(client, org, tx):
    body = a_quote_body(client, org)
    first = client.simulate_post(QUOTES, json=body, headers=keyed(org.user, "quote-2027-001"))
    retry = client.simulate_post(QUOTES, json=body, headers=keyed(org.user, "quote-2027-001"))

    assert first.status_code == retry.status_code == 201
    assert "Idempotent-Replayed" not in first.headers
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json == first.json and retry.text == first.text
    assert retry.headers["content-type"] == first.headers["content-type"] == "application/json"
    assert retry.headers["X-Request-Id"] == first.headers["X-Request-Id"]  # the original answer, as Stripe does
    assert quotes_of(tx, org) == 1
    assert [e["data"]["id"] for e in events(tx, org.id, "quote.created")] == [first.json["id"]]
    assert kept_keys(tx, org) == [("quote-2027-001", 201)]


def test_without_a_key_every_post_creates(client, org, tx):
    body = a_quote_body(client, org)
    ids = {client.simulate_post(QUOTES, json=body, headers=org.user.headers).json["id"] for _ in range(2)}
    assert len(ids) == 2 and quotes_of(tx, org) == 2
    assert kept_keys(tx, org) == []


def test_the_same_body_in_another_key_order_and_spacing_is_the_same_request(client, org, tx):
    body = {"name": "Big deal", "accountName": "Initech"}
    first = client.simulate_post(OPPORTUNITIES, json=body, headers=keyed(org.admin, "opp-1"))
    spaced = '{\n  "accountName" : "Initech",\n  "name" : "Big deal"\n}'
    retry = client.simulate_post(
        OPPORTUNITIES, body=spaced, headers={**keyed(org.admin, "opp-1"), "Content-Type": "application/json"}
    )
    assert retry.status_code == 201 and retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json["id"] == first.json["id"]


def test_the_same_key_with_another_body_or_path_is_422_and_runs_nothing(client, org, tx):
    body = a_quote_body(client, org)
    client.simulate_post(QUOTES, json=body, headers=keyed(org.admin, "k-422"))  # the admin may post both paths

    other_body = client.simulate_post(QUOTES, json={**body, "name": "Another"}, headers=keyed(org.admin, "k-422"))
    assert other_body.status_code == 422, other_body.json
    assert other_body.headers["content-type"] == "application/problem+json"
    assert other_body.json["code"] == "idempotency_key_reused"
    assert "another request body" in other_body.json["detail"]

    other_path = client.simulate_post(
        OPPORTUNITIES, json={"name": "x", "accountName": "y"}, headers=keyed(org.admin, "k-422")
    )
    assert other_path.status_code == 422 and other_path.json["code"] == "idempotency_key_reused"
    assert f"POST {QUOTES}" in other_path.json["detail"]
    assert quotes_of(tx, org) == 1


def test_keys_are_per_organization_a_replay_never_crosses_over(client, org, other_org, tx):
    body = {"name": "Same deal", "accountName": "Initech"}
    ours = client.simulate_post(OPPORTUNITIES, json=body, headers=keyed(org.admin, "shared-key"))
    theirs = client.simulate_post(OPPORTUNITIES, json=body, headers=keyed(other_org.admin, "shared-key"))
    assert ours.status_code == theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs.headers
    assert theirs.json["id"] != ours.json["id"]
    assert client.simulate_get(f"{OPPORTUNITIES}/{ours.json['id']}", headers=other_org.admin.headers).status_code == 404


def test_a_key_is_bound_for_24_hours_then_runs_anew(client, org, tx):
    body = a_quote_body(client, org)
    first = client.simulate_post(QUOTES, json=body, headers=keyed(org.user, "k-day"))
    with tx() as session:  # the record's clock moved 24 hours on
        session.execute(
            update(IDEMPOTENCY_KEYS)
            .where(IDEMPOTENCY_KEYS.c.organization_id == org.id)
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    later = client.simulate_post(QUOTES, json={**body, "name": "Next year"}, headers=keyed(org.user, "k-day"))
    assert later.status_code == 201 and "Idempotent-Replayed" not in later.headers
    assert later.json["id"] != first.json["id"] and quotes_of(tx, org) == 2
    replay = client.simulate_post(QUOTES, json={**body, "name": "Next year"}, headers=keyed(org.user, "k-day"))
    assert replay.json["id"] == later.json["id"] and replay.headers["Idempotent-Replayed"] == "true"


def test_requests_refused_for_their_api_key_or_scope_keep_nothing(client, org, tx):
    body = a_quote_body(client, org)
    missing = client.simulate_post(QUOTES, json=body, headers={"Idempotency-Key": "k-auth"})
    invalid = client.simulate_post(QUOTES, json=body, headers={"x-api-key": "dps_nope_nope", "Idempotency-Key": "k-auth"})
    viewer = client.simulate_post(QUOTES, json=body, headers=keyed(org.viewer, "k-auth"))
    assert (missing.status_code, invalid.status_code, viewer.status_code) == (401, 401, 403)
    assert invalid.json["detail"] == INVALID_KEY and viewer.json["code"] == "missing_scope"
    assert kept_keys(tx, org) == []
    created = client.simulate_post(QUOTES, json=body, headers=keyed(org.user, "k-auth"))
    assert created.status_code == 201 and "Idempotent-Replayed" not in created.headers


def test_a_malformed_key_is_400_and_nothing_is_created(client, org, tx):
    body = a_quote_body(client, org)
    for key in ("x" * 256, "caf\u00e9", ""):
        resp = client.simulate_post(QUOTES, json=body, headers=keyed(org.user, key))
        assert resp.status_code == 400, (key, resp.json)
        assert resp.json["code"] == "invalid_idempotency_key" and "Idempotency-Key" in resp.json["detail"]
    assert quotes_of(tx, org) == 0 and kept_keys(tx, org) == []
    longest = client.simulate_post(QUOTES, json=body, headers=keyed(org.user, "x" * 255))
    assert longest.status_code == 201


def test_a_body_its_schema_refuses_keeps_nothing_so_the_corrected_request_runs(client, org, tx):
    body = a_quote_body(client, org)
    wrong = client.simulate_post(QUOTES, json={**body, "subscriptionTermMonths": "twelve"}, headers=keyed(org.user, "k-fix"))
    assert wrong.status_code == 400 and wrong.json["code"] == "validation_error"
    assert kept_keys(tx, org) == []
    fixed = client.simulate_post(QUOTES, json=body, headers=keyed(org.user, "k-fix"))
    assert fixed.status_code == 201 and "Idempotent-Replayed" not in fixed.headers


def test_a_business_rule_refusal_is_kept_and_replayed_like_a_success(client, org, other_org, tx):
    body = {**a_quote_body(client, org), "ownerUserId": str(other_org.user.user_id)}
    first = client.simulate_post(QUOTES, json=body, headers=keyed(org.admin, "k-rule"))
    assert first.status_code == 400 and first.json["code"] == "unknown_reference"
    retry = client.simulate_post(QUOTES, json=body, headers=keyed(org.admin, "k-rule"))
    assert retry.status_code == 400 and retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json == first.json and retry.headers["content-type"] == "application/problem+json"
    assert kept_keys(tx, org) == [("k-rule", 400)]


def test_a_state_conflict_is_not_kept_a_retry_rechecks_the_state(client, org, tx):
    quote = client.simulate_post(QUOTES, json=a_quote_body(client, org), headers=org.user.headers).json
    submit = f"{QUOTES}/{quote['id']}/approval"
    assert client.simulate_post(submit, headers=org.user.headers).status_code == 201  # approved at once
    conflict = client.simulate_post(submit, headers=keyed(org.user, "k-submit"))
    assert conflict.status_code == 409 and "Idempotent-Replayed" not in conflict.headers
    assert kept_keys(tx, org) == []


def test_a_retried_submit_is_replayed_not_refused_as_already_submitted(client, org, tx):
    quote = client.simulate_post(QUOTES, json=a_quote_body(client, org), headers=org.user.headers).json
    submit = f"{QUOTES}/{quote['id']}/approval"
    first = client.simulate_post(submit, headers=keyed(org.user, "k-approve"))
    retry = client.simulate_post(submit, headers=keyed(org.user, "k-approve"))
    assert first.status_code == retry.status_code == 201
    assert retry.json == first.json and retry.headers["Idempotent-Replayed"] == "true"
    assert client.simulate_post(submit, headers=org.user.headers).status_code == 409  # without the key: refused


def test_the_document_gives_every_post_the_header_its_replay_marker_and_the_409_and_422(client):
    doc = inline_refs(client.simulate_get(f"{API}/openapi.json").json)
    posts = 0
    for path, item in doc["paths"].items():
        for method, op in item.items():
            headers = [p for p in op["parameters"] if p["name"] == "Idempotency-Key"]
            if method != "post":
                assert headers == [], (method, path)
                continue
            posts += 1
            assert len(headers) == 1 and headers[0]["in"] == "header", path
            assert headers[0]["schema"]["maxLength"] == 255 and not headers[0]["required"]
            assert {"409", "422"} <= set(op["responses"]), path
            assert "Idempotency-Key" in op["responses"]["409"]["description"]
            success = next(code for code in op["responses"] if code.startswith("2"))
            assert "Idempotent-Replayed" in op["responses"][success]["headers"], path
            assert "Idempotent-Replayed" not in op["responses"]["401"].get("headers", {})  # RateLimit fields: yes
    assert posts >= 10
