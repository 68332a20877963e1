"""Idempotent POSTs (beyond the spec: Stripe's design and the IETF draft "The Idempotency-Key HTTP
Header Field"), black-box against the api and the webhook dispatcher under gunicorn (two worker
processes each): a POST sent with an ``Idempotency-Key`` runs once per client (the organization's API
key that sent it) and key, a retry gets the first answer with ``Idempotent-Replayed: true`` (a
secret in it shown once: the replay carries it as null with a ``secretShownOnce`` notice), another body under the key is 422,
concurrent retries are 409 or the replay (never a second object), a malformed key is 400, and
refusals for the API key keep nothing. Expiry after 24 hours is held by the services' own suites."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from dps_common.openapi.components import inline_refs

import contract_data as data
from contract_client import assert_problem

QUOTES = "/pricing-quotes"


def keyed(key: str) -> dict[str, str]:
    return {"Idempotency-Key": key}


@pytest.fixture(scope="module")
def seat(api, org) -> dict:
    return data.product(api, org.admin)


def quote_body(product: dict) -> dict:
    return {
        "name": data.unique("Idempotent quote"),
        "currency": "USD",
        "billingFrequency": "MONTHLY",
        "subscriptionTermMonths": 12,
        "lines": [data.line(product["id"], quantity="2")],
    }


def quotes_named(api, org, name: str) -> list[dict]:
    return [q for q in api.walk(QUOTES, org.admin, "pricingQuotes", limit=500) if q["name"] == name]


def test_the_same_key_creates_one_quote_and_replays_the_first_answer(api, org, seat):
    body = quote_body(seat)
    key = data.unique("quote-key")
    first = api.post(QUOTES, org.user, json=body, headers=keyed(key))
    retry = api.post(QUOTES, org.user, json=body, headers=keyed(key))
    assert first.status_code == retry.status_code == 201, retry.text
    assert "Idempotent-Replayed" not in first.headers
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json() == first.json()
    assert retry.headers["X-Request-Id"] == first.headers["X-Request-Id"]
    assert [q["id"] for q in quotes_named(api, org, body["name"])] == [first.json()["id"]]


def test_concurrent_retries_across_workers_make_one_quote(api, org, seat):
    body = quote_body(seat)
    key = data.unique("burst-key")
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: api.post(QUOTES, org.user, json=body, headers=keyed(key)), range(8)))
    ran = [a for a in answers if a.status_code == 201 and "Idempotent-Replayed" not in a.headers]
    assert len(ran) == 1, [(a.status_code, a.headers.get("Idempotent-Replayed")) for a in answers]
    for answer in answers:
        if answer.status_code == 409:
            assert_problem(answer, 409, "idempotency_key_in_use")
        else:
            assert answer.status_code == 201 and answer.json()["id"] == ran[0].json()["id"]
    settled = api.post(QUOTES, org.user, json=body, headers=keyed(key))
    assert settled.status_code == 201 and settled.headers["Idempotent-Replayed"] == "true"
    assert len(quotes_named(api, org, body["name"])) == 1


def test_the_same_key_with_another_body_is_422(api, org, seat):
    body = quote_body(seat)
    key = data.unique("reused-key")
    api.ok("POST", QUOTES, org.user, json=body, headers=keyed(key), status=201)
    problem = assert_problem(api.post(QUOTES, org.user, json={**body, "name": "Other"}, headers=keyed(key)), 422)
    assert problem["code"] == "idempotency_key_reused" and "Idempotency-Key" in problem["detail"]
    assert quotes_named(api, org, "Other") == []


def test_keys_are_per_client_another_key_of_the_organization_makes_its_own_request(api, org, fresh_member):
    body = {"name": data.unique("Opportunity"), "accountName": "Initech"}
    key = data.unique("per-client-key")
    colleague = fresh_member("admin")  # another admin key of the same organization
    ours = api.post("/opportunities", org.admin, json=body, headers=keyed(key))
    theirs = api.post("/opportunities", colleague, json=body, headers=keyed(key))
    assert ours.status_code == theirs.status_code == 201, theirs.text
    assert "Idempotent-Replayed" not in theirs.headers and theirs.json()["id"] != ours.json()["id"]
    again = api.post("/opportunities", colleague, json=body, headers=keyed(key))
    assert again.headers["Idempotent-Replayed"] == "true" and again.json()["id"] == theirs.json()["id"]


def test_keys_are_per_organization(api, org, other_org):
    body = {"name": data.unique("Opportunity"), "accountName": "Initech"}
    key = data.unique("shared-key")
    ours = api.post("/opportunities", org.admin, json=body, headers=keyed(key))
    theirs = api.post("/opportunities", other_org.admin, json=body, headers=keyed(key))
    assert ours.status_code == theirs.status_code == 201
    assert "Idempotent-Replayed" not in theirs.headers and theirs.json()["id"] != ours.json()["id"]


@pytest.mark.parametrize("key", ["x" * 256, "tab\tinside"])
def test_a_malformed_key_is_400(api, org, seat, key):
    problem = assert_problem(api.post(QUOTES, org.user, json=quote_body(seat), headers=keyed(key)), 400)
    assert problem["code"] == "invalid_idempotency_key"


def test_refusals_for_the_api_key_or_scope_keep_nothing(api, org, seat):
    body = quote_body(seat)
    key = data.unique("refused-key")
    assert_problem(api.post(QUOTES, "dps_nope_nope", json=body, headers=keyed(key)), 401)
    assert_problem(api.post(QUOTES, org.viewer, json=body, headers=keyed(key)), 403)
    created = api.post(QUOTES, org.user, json=body, headers=keyed(key))
    assert created.status_code == 201 and "Idempotent-Replayed" not in created.headers


def test_the_dispatcher_registers_once_per_key_and_never_replays_the_secret(webhook_api, org):
    hooks = webhook_api.hooks
    body = {"url": webhook_api.url(webhook_api.new_path()), "eventTypes": ["quote.approved"]}
    key = data.unique("register-key")
    first = hooks.post("/webhook-configs", org.admin, json=body, headers=keyed(key))
    retry = hooks.post("/webhook-configs", org.admin, json=body, headers=keyed(key))
    try:
        assert first.status_code == retry.status_code == 201, retry.text
        assert retry.headers["Idempotent-Replayed"] == "true"
        secret = first.json()["secret"]
        assert secret.startswith("whsec_") and secret not in retry.text
        replayed = retry.json()
        notice = replayed.pop("secretShownOnce")
        assert replayed == {**first.json(), "secret": None}
        assert notice["fields"] == ["secret"] and "shown once" in notice["detail"]
        assert notice["renewal"] == f"POST /webhook-configs/{first.json()['id']}/rotate-secret"
        rotate = f"/webhook-configs/{first.json()['id']}/rotate-secret"
        rotated = hooks.post(rotate, org.admin, headers=keyed(key + "-rotate"))
        rotated_again = hooks.post(rotate, org.admin, headers=keyed(key + "-rotate"))
        assert rotated.status_code == rotated_again.status_code == 200, rotated_again.text
        assert rotated.json()["secret"].startswith("whsec_") and rotated_again.json()["secret"] is None
        assert rotated_again.json()["secretShownOnce"]["renewal"] == notice["renewal"]
        listed = hooks.walk("/webhook-configs", org.admin, "webhookConfigs", limit=500)
        assert [c["id"] for c in listed if c["url"] == body["url"]] == [first.json()["id"]]
        other = hooks.post("/webhook-configs", org.admin, json={**body, "description": "x"}, headers=keyed(key))
        assert assert_problem(other, 422)["code"] == "idempotency_key_reused"
    finally:
        if first.status_code == 201:
            hooks.delete(f"/webhook-configs/{first.json()['id']}", org.admin)


def test_both_documents_show_the_header_on_their_posts(api, webhook_api):
    for service in (api, webhook_api.hooks):
        doc = inline_refs(service.get("/openapi.json").json())
        posts = [op for item in doc["paths"].values() for method, op in item.items() if method == "post"]
        assert posts
        for op in posts:
            assert "Idempotency-Key" in [p["name"] for p in op["parameters"]], op["operationId"]
            assert {"409", "422"} <= set(op["responses"])


def test_the_document_says_a_replay_carries_no_secret(webhook_api):
    doc = webhook_api.hooks.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    for path, status in (("/webhook-configs", "201"), ("/webhook-configs/{webhook_config_id}/rotate-secret", "200")):
        op = doc["paths"][path]["post"]
        assert "shown once" in op["description"] and "secretShownOnce" in op["description"]
        refs = [ref["$ref"] for ref in op["responses"][status]["content"]["application/json"]["schema"]["oneOf"]]
        assert refs == ["#/components/schemas/WebhookConfigWithSecret", "#/components/schemas/WebhookConfigWithSecretReplayed"]
    replayed = schemas["WebhookConfigWithSecretReplayed"]
    assert replayed["properties"]["secret"]["type"] == "null"
    assert {"secret", "secretShownOnce"} <= set(replayed["required"])
    assert schemas["SecretShownOnce"]["required"] == ["fields", "detail", "renewal"]
