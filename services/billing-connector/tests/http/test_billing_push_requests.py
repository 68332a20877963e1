"""Push requests over the API (``build_http`` with a rolled-back transaction per test): who may
push, which quotes, one push at a time per quote, the list newest first and one push."""

from __future__ import annotations

from datetime import timedelta
from uuid import uuid4

import pytest
from sqlalchemy import update

from dps_common.clock import utc_now
from dps_common.ids import new_id

from dps_billing.db.models import BillingConnection, BillingPush
from dps_billing.domain.quote_snapshot import QuoteStatus

from billing_helpers import line, quote


@pytest.fixture
def org(fake_api, tx):
    org = fake_api.organization()
    with tx() as session:
        session.add(BillingConnection(
            id=new_id(), organization_id=org.id, account_id="acct_test", livemode=False, status="connected",
            connected_by=org.admin.user_id, connected_at=utc_now(), access_token_sealed=b"x",
            refresh_token_sealed=b"x", access_expires_at=utc_now() + timedelta(hours=1), updated_at=utc_now(),
        ))
    return org


def push(client, key, quote_id):
    return client.simulate_post(f"/external/v1/pricing-quotes/{quote_id}/billing-pushes", headers={"x-api-key": key})


def test_the_owner_pushes_an_approved_quote_and_a_second_request_answers_the_same_push(client, fake_api, org):
    snapshot = quote(org.id, org.user.user_id, [line()])
    fake_api.put_quote(snapshot)
    first = push(client, org.admin.key, snapshot.id)
    assert first.status_code == 202
    body = first.json
    assert body["status"] == "queued" and body["quoteId"] == str(snapshot.id)
    assert body["progress"] == {"linesTotal": 0, "productsCreated": 0, "pricesCreated": 0, "quoteCreated": False}
    assert body["warnings"] == [] and body["error"] is None and body["products"] == []
    assert first.headers["location"].endswith(f"/billing-pushes/{body['id']}")
    second = push(client, org.admin.key, snapshot.id)
    assert second.status_code == 200 and second.json["id"] == body["id"]
    got = client.simulate_get(f"/external/v1/pricing-quotes/{snapshot.id}/billing-pushes/{body['id']}",
                              headers={"x-api-key": org.viewer.key})
    assert got.status_code == 200 and got.json["id"] == body["id"]


def test_only_an_admin_pushes_even_the_owner_s_user_key_is_refused(client, fake_api, org):
    """Spec section 5: pushing to the billing platform is not in the user role (its reach is creating and
    editing quotes, updating opportunities, submitting and recalling approvals); admin is everything."""
    snapshot = quote(org.id, org.user.user_id, [line()])
    fake_api.put_quote(snapshot)
    for member in (org.user, org.other_user, org.viewer):
        refused = push(client, member.key, snapshot.id)
        assert refused.status_code == 403 and refused.json["requiredScope"] == "billing:push", member
    assert push(client, org.admin.key, snapshot.id).status_code == 202


@pytest.mark.parametrize("status", [QuoteStatus.DRAFT, QuoteStatus.PENDING_APPROVAL, QuoteStatus.REJECTED])
def test_only_an_approved_quote_is_pushed(client, fake_api, org, status):
    snapshot = quote(org.id, org.user.user_id, [line()], status=status)
    fake_api.put_quote(snapshot)
    resp = push(client, org.admin.key, snapshot.id)
    assert resp.status_code == 409 and resp.json["code"] == "quote_not_approved"
    assert status.value in resp.json["detail"]


def test_unknown_or_foreign_quotes_are_404(client, fake_api, org):
    assert push(client, org.admin.key, uuid4()).status_code == 404
    assert push(client, org.admin.key, "not-a-uuid").status_code == 404
    stranger = fake_api.organization()
    foreign = quote(stranger.id, stranger.admin.user_id, [line()])
    fake_api.put_quote(foreign)
    assert push(client, org.admin.key, foreign.id).status_code == 404


def test_the_pushes_of_an_unknown_or_foreign_quote_are_404_as_the_quote_is(client, fake_api, org):
    """As ``GET /pricing-quotes/{id}`` answers for them: not an empty list that tells nothing apart."""
    stranger = fake_api.organization()
    foreign = quote(stranger.id, stranger.admin.user_id, [line()])
    fake_api.put_quote(foreign)
    mine = quote(org.id, org.user.user_id, [line()])
    fake_api.put_quote(mine)
    for quote_id in (foreign.id, uuid4()):
        resp = client.simulate_get(f"/external/v1/pricing-quotes/{quote_id}/billing-pushes",
                                   headers={"x-api-key": org.viewer.key})
        assert resp.status_code == 404 and resp.json["code"] == "not_found", resp.text
    never_pushed = client.simulate_get(f"/external/v1/pricing-quotes/{mine.id}/billing-pushes",
                                       headers={"x-api-key": org.viewer.key})
    assert never_pushed.status_code == 200 and never_pushed.json == {"billingPushes": [], "nextCursor": None}


def test_without_a_connection_the_push_is_refused(client, fake_api):
    org = fake_api.organization()
    snapshot = quote(org.id, org.user.user_id, [line()])
    fake_api.put_quote(snapshot)
    resp = push(client, org.admin.key, snapshot.id)
    assert resp.status_code == 409 and resp.json["code"] == "billing_not_connected"


def test_the_list_is_newest_first_and_paged(client, fake_api, org, tx):
    snapshot = quote(org.id, org.user.user_id, [line()])
    fake_api.put_quote(snapshot)
    ids = []
    for _ in range(3):
        ids.append(push(client, org.admin.key, snapshot.id).json["id"])
        with tx() as session:  # finished, so the next request starts another
            session.execute(update(BillingPush).where(BillingPush.quote_id == snapshot.id).values(status="failed"))
    url = f"/external/v1/pricing-quotes/{snapshot.id}/billing-pushes"
    first = client.simulate_get(url, params={"limit": "2"}, headers={"x-api-key": org.viewer.key}).json
    assert [p["id"] for p in first["billingPushes"]] == ids[::-1][:2]
    rest = client.simulate_get(url, params={"limit": "2", "cursor": first["nextCursor"]},
                               headers={"x-api-key": org.viewer.key}).json
    assert [p["id"] for p in rest["billingPushes"]] == ids[:1] and rest["nextCursor"] is None
    bad = client.simulate_get(url, params={"cursor": "forged.cursor"}, headers={"x-api-key": org.viewer.key})
    assert bad.status_code == 400
    for limit in ("１０", "١٠", "¹⁰", "0"):  # ASCII digits only, within the range
        bad = client.simulate_get(url, params={"limit": limit}, headers={"x-api-key": org.viewer.key})
        assert bad.status_code == 400 and bad.json["code"] == "invalid_limit", limit


def test_the_organization_s_recent_pushes_newest_first_and_paged(client, fake_api, org, tx):
    first, second = (quote(org.id, org.user.user_id, [line()]) for _ in range(2))
    other = fake_api.organization()
    ids = []
    for snapshot in (first, second, first):
        fake_api.put_quote(snapshot)
        ids.append(push(client, org.admin.key, snapshot.id).json["id"])
        with tx() as session:  # finished, so the next request on the quote starts another
            session.execute(update(BillingPush).where(BillingPush.id == ids[-1]).values(status="failed"))
    url = "/external/v1/billing-pushes"
    page = client.simulate_get(url, params={"limit": "2"}, headers={"x-api-key": org.viewer.key}).json
    assert [p["id"] for p in page["billingPushes"]] == ids[::-1][:2]
    one = client.simulate_get(f"/external/v1/pricing-quotes/{first.id}/billing-pushes/{ids[2]}",
                              headers={"x-api-key": org.viewer.key}).json
    assert page["billingPushes"][0] == one  # the item the per-quote list and read answer
    rest = client.simulate_get(url, params={"limit": "2", "cursor": page["nextCursor"]},
                               headers={"x-api-key": org.viewer.key}).json
    assert [p["id"] for p in rest["billingPushes"]] == ids[:1] and rest["nextCursor"] is None
    assert client.simulate_get(url, headers={"x-api-key": other.admin.key}).json["billingPushes"] == []
    assert client.simulate_get(url, params={"limit": "501"}, headers={"x-api-key": org.viewer.key}).status_code == 400
    assert client.simulate_get(url).status_code == 401


def test_the_openapi_document_declares_every_operation_with_its_scopes(client):
    document = client.simulate_get("/external/v1/openapi.json").json
    scopes = {
        (path, method): op["x-required-scopes"]
        for path, item in document["paths"].items() for method, op in item.items()
    }
    assert scopes == {
        ("/billing-connection", "get"): ["billing:manage"],
        ("/billing-connection", "delete"): ["billing:manage"],
        ("/billing-connection/authorize", "post"): ["billing:manage"],
        ("/billing-connection/start", "get"): [],
        ("/billing-connection/callback", "get"): [],
        ("/billing-pushes", "get"): ["quotes:read"],
        ("/billing-platform/webhooks", "post"): [],
        ("/pricing-quotes/{quote_id}/billing-pushes", "post"): ["billing:push"],
        ("/pricing-quotes/{quote_id}/billing-pushes", "get"): ["quotes:read"],
        ("/pricing-quotes/{quote_id}/billing-pushes/{push_id}", "get"): ["quotes:read"],
    }
    assert document["paths"]["/billing-connection/callback"]["get"]["security"] == []


def test_the_browser_pages_are_documented_as_they_answer(client):
    """text/html and redirects, not problem+json: a checker finds no undocumented content type."""
    paths = client.simulate_get("/external/v1/openapi.json").json["paths"]
    callback = paths["/billing-connection/callback"]["get"]["responses"]
    for status in ("200", "400", "502"):
        assert list(callback[status]["content"]) == ["text/html"], status
    assert "Location" in callback["303"]["headers"]
    start = paths["/billing-connection/start"]["get"]["responses"]
    assert "200" not in start and "Set-Cookie" in start["303"]["headers"]
    assert list(start["400"]["content"]) == ["text/html"]
    answered = client.simulate_get("/external/v1/billing-connection/callback", params={"state": "x.y"})
    assert answered.status_code == 400 and answered.headers["content-type"].startswith("text/html")
