"""Spec section 3, "Billing platform connection", and the connection flow of section 4: none ->
connected when an admin completes the authorization flow (the account id and OAuth tokens stored
for the organization); connected -> removed when the app is removed on the billing platform, or
disconnected in the service. The calls to the platform are the spec's: the authorize page on the
marketplace, ``POST /v1/oauth/token`` and ``POST /v1/oauth/deauthorize`` on its API; the platform's
signed authorization and deauthorization webhooks keep the status current.

The admin's browser is plain HTTP here (open the start URL, which binds the flow to the browser with
a cookie and redirects to the platform's page, press Install or Cancel there, follow the redirect to
the connector's callback); the connector's own tests drive the same flow in headless Chromium."""

from __future__ import annotations

import base64
import json
import time
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import stripe
from contract_billing import CALLBACK_PATH, CLIENT_ID, SECRET_KEY, WEBHOOK_SECRET, state_of

from contract_client import assert_problem
from contract_webhooks import wait_for

CONNECTION_FIELDS = {"status", "accountId", "livemode", "mode", "connectedBy", "connectedAt"}


@pytest.fixture(scope="module")
def org(make_org):
    return make_org("Billing Connection Co")


@pytest.fixture(scope="module")
def other(make_org):
    return make_org("Billing Other Co")


@pytest.fixture(autouse=True)
def _starts_unconnected(billing, org, other):
    """Every test starts from none (making an organization per test costs seconds)."""
    for each in (org, other):
        billing.connector.delete("/billing-connection", each.admin)  # 204, or 404: none already
    yield


def _timestamp(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    assert parsed.tzinfo is not None, value
    return parsed


def _basic_user(headers: dict[str, str]) -> str:
    value = next(v for k, v in headers.items() if k.lower() == "authorization")
    scheme, _, encoded = value.partition(" ")
    assert scheme.lower() == "basic", value[:10]
    user, _, password = base64.b64decode(encoded).decode().partition(":")
    assert password == ""
    return user


# --- none ----------------------------------------------------------------------------------------


def test_without_a_connection_the_status_is_not_found(billing, org):
    body = assert_problem(billing.connector.get("/billing-connection", org.admin), 404, "billing_not_connected")
    assert "POST /billing-connection/authorize" in body["detail"]


def test_authorize_gives_a_start_url_that_binds_the_browser_and_leads_to_the_marketplace(billing, org):
    before = datetime.now(UTC)
    link = billing.authorize(org.admin)
    assert "authorizeUrl" not in link  # nothing usable without the browser binding
    start = urlsplit(link["startUrl"])
    assert billing.connector.origin + CALLBACK_PATH.replace("/callback", "/start") == \
        f"{start.scheme}://{start.netloc}{start.path}"
    started = billing.browser().get(link["startUrl"], allow_redirects=False, timeout=30)
    assert started.status_code == 303
    cookie = [part.strip().lower() for part in started.headers["Set-Cookie"].split(";")]
    assert {"httponly", "secure", "samesite=lax"} <= set(cookie)  # the connector is served over https here
    url = urlsplit(started.headers["Location"])
    assert f"{url.scheme}://{url.netloc}{url.path}" == billing.stand_in.marketplace_url + "/oauth/v2/authorize"
    query = parse_qs(url.query)
    assert set(query) == {"client_id", "redirect_uri", "state"}
    assert query["client_id"] == [CLIENT_ID]
    assert query["redirect_uri"] == [billing.connector.origin + CALLBACK_PATH]
    assert len(query["state"][0]) >= 32
    # good for minutes, at most ten
    assert before < _timestamp(link["expiresAt"]) <= datetime.now(UTC) + timedelta(minutes=10)
    assert billing.authorize(org.admin)["startUrl"] != link["startUrl"]  # a new flow each time
    again = billing.browser().get(link["startUrl"], allow_redirects=False, timeout=30)
    assert again.status_code == 400 and 'data-outcome="ticket_invalid"' in again.text  # good once


def test_a_state_completed_in_another_browser_connects_nothing(billing, org, other):
    """RFC 6749 section 10.12: org's admin started the flow; the other organization's admin completes
    org's state with a code of their own install, in their own browser."""
    browser, link = billing.start(org.admin)
    attacker, _ = billing.start(other.admin)
    code = billing.stand_in.install()
    for elsewhere in (billing.browser(), attacker):
        page = elsewhere.get(billing.connector.origin + CALLBACK_PATH, params={"code": code, "state": state_of(link)},
                             timeout=30)
        assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
        assert 'data-outcome="not_this_browser"' in page.text
    assert_problem(billing.connector.get("/billing-connection", org.admin), 404, "billing_not_connected")
    assert billing.install(link, browser=browser).outcome == "connected"  # the admin's own browser still can


# --- none -> connected -----------------------------------------------------------------------------


def test_the_admin_installs_the_app_and_the_organization_is_connected(billing, org):
    before = datetime.now(UTC)
    landed = billing.install(billing.authorize(org.admin)["startUrl"])
    assert landed.response.status_code == 200
    assert landed.response.headers["content-type"].startswith("text/html")
    assert landed.outcome == "connected"
    [account] = [a for a in billing.stand_in.installed_accounts() if a in landed.response.text]

    connection = billing.connection(org)
    assert set(connection) >= CONNECTION_FIELDS
    assert connection["status"] == "connected"
    assert connection["accountId"] == account
    assert (connection["livemode"], connection["mode"]) == (False, "test")
    assert connection["connectedBy"] == org.admin.user_id
    assert before - timedelta(seconds=5) <= _timestamp(connection["connectedAt"]) <= datetime.now(UTC)
    assert "token" not in json.dumps(connection).lower()  # the tokens are never shown


def test_the_code_is_exchanged_at_the_platforms_token_endpoint_with_the_apps_key(billing, org):
    landed = billing.install(billing.authorize(org.admin)["startUrl"])
    code = parse_qs(urlsplit(landed.response.history[-1].headers["Location"]).query)["code"][0]
    [exchange] = [r for r in billing.stand_in.requests(path="/v1/oauth/token", method="POST")
                  if r.form and r.form.get("code") == code]
    assert exchange.form == {"grant_type": "authorization_code", "code": code}
    assert _basic_user(exchange.headers) == SECRET_KEY
    assert exchange.status == 200
    assert billing.connection(org)["accountId"] == exchange.response["stripe_user_id"]


def test_the_platform_redirects_to_the_callback_with_the_state_it_was_given(billing, org):
    browser, link = billing.start(org.admin)
    landed = billing.install(link, browser=browser)
    redirect = urlsplit(landed.response.history[-1].headers["Location"])
    assert f"{redirect.scheme}://{redirect.netloc}{redirect.path}" == billing.connector.origin + CALLBACK_PATH
    assert parse_qs(redirect.query)["state"] == [state_of(link)]


def test_cancel_on_the_platform_leaves_the_organization_unconnected(billing, org):
    landed = billing.install(billing.authorize(org.admin)["startUrl"], decision="cancel")
    assert (landed.response.status_code, landed.outcome) == (200, "denied")
    assert_problem(billing.connector.get("/billing-connection", org.admin), 404, "billing_not_connected")


def test_a_state_is_good_for_one_install_only(billing, org):
    browser, link = billing.start(org.admin)
    first = billing.install(link, browser=browser)
    assert first.outcome == "connected"
    account = billing.connection(org)["accountId"]
    again = billing.install(link, browser=browser)  # the same link pressed again: the platform makes a new code
    assert (again.response.status_code, again.outcome) == (400, "state_used")
    assert billing.connection(org)["accountId"] == account


def test_a_state_from_another_organizations_link_connects_only_that_organization(billing, org, other):
    billing.install(billing.authorize(other.admin)["startUrl"])
    assert billing.connection(other)["connectedBy"] == other.admin.user_id
    assert_problem(billing.connector.get("/billing-connection", org.admin), 404, "billing_not_connected")


def test_a_forged_or_missing_state_is_refused(billing, org):
    browser, link = billing.start(org.admin)
    forged = state_of(link)[:-4] + ("AAAA" if not state_of(link).endswith("AAAA") else "BBBB")
    for params in ({"code": "ac_whatever", "state": forged}, {"code": "ac_whatever"}):
        page = browser.get(billing.connector.origin + CALLBACK_PATH, params=params, timeout=30)
        assert page.status_code == 400
        assert 'data-outcome="state_invalid"' in page.text
    assert_problem(billing.connector.get("/billing-connection", org.admin), 404, "billing_not_connected")


def test_connecting_again_replaces_the_connection(billing, org):
    first = billing.connect(org)
    second = billing.connect(org)
    assert second["accountId"] != first["accountId"]
    assert billing.connection(org)["accountId"] == second["accountId"]


# --- connected -> removed --------------------------------------------------------------------------


def test_disconnect_in_the_service_deauthorizes_on_the_platform_and_deletes(billing, org):
    account = billing.connect(org)["accountId"]
    resp = billing.connector.delete("/billing-connection", org.admin)
    assert resp.status_code == 204 and resp.content == b""
    [call] = [r for r in billing.stand_in.requests(path="/v1/oauth/deauthorize", method="POST")
              if r.form and r.form.get("stripe_user_id") == account]
    assert call.form == {"client_id": CLIENT_ID, "stripe_user_id": account}
    assert call.status == 200
    assert account not in billing.stand_in.installed_accounts()
    assert_problem(billing.connector.get("/billing-connection", org.admin), 404, "billing_not_connected")
    assert_problem(billing.connector.delete("/billing-connection", org.admin), 404, "billing_not_connected")


def test_removing_the_app_on_the_platform_removes_the_connection(billing, org):
    account = billing.connect(org)["accountId"]
    billing.stand_in.uninstall(account)  # the platform's own uninstall: a signed webhook to the connector
    billing.wait_disconnected(org)
    deliveries = [d for d in billing.stand_in.wait_for_webhooks(timeout=30)
                  if d.account == account and d.event_type == "account.application.deauthorized"]
    assert [d.status for d in deliveries] == [200]


def test_after_removal_the_organization_connects_again(billing, org):
    account = billing.connect(org)["accountId"]
    billing.stand_in.uninstall(account)
    billing.wait_disconnected(org)
    again = billing.connect(org, account=account)  # the same platform account, installed anew
    assert (again["status"], again["accountId"]) == ("connected", account)


def test_the_platforms_install_event_reaches_the_connector_signed(billing, org):
    account = billing.connect(org)["accountId"]
    [delivery] = wait_for(lambda: [d for d in billing.stand_in.wait_for_webhooks(timeout=30)
                                   if d.account == account and d.event_type == "account.application.authorized"]
                          or None, "the install event delivered")
    assert delivery.status == 200
    assert json.loads(delivery.response_body or "{}") == {"received": True, "processed": True}


# --- the platform's webhooks ------------------------------------------------------------------------


def _event(event_type: str, account: str, event_id: str | None = None) -> bytes:
    return json.dumps({
        "id": event_id or f"evt_contract{time.time_ns()}", "object": "event", "type": event_type,
        "account": account, "livemode": False, "created": int(time.time()),
        "data": {"object": {"id": CLIENT_ID, "object": "application"}},
    }).encode()


def _post_event(billing, body: bytes, signature: str | None):
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers["Stripe-Signature"] = signature
    return billing.connector.post("/billing-platform/webhooks", data=body, headers=headers)


def test_a_platform_event_with_a_bad_or_stale_signature_is_refused_and_changes_nothing(billing, org):
    account = billing.connect(org)["accountId"]
    body = _event("account.application.deauthorized", account)
    payload = body.decode()
    for signature in (
        None,
        stripe.WebhookSignature.generate_signature_header(payload, "whsec_not_the_apps_secret"),
        stripe.WebhookSignature.generate_signature_header(payload, WEBHOOK_SECRET, int(time.time()) - 301),
    ):
        assert_problem(_post_event(billing, body, signature), 400, "invalid_signature")
    assert billing.connection(org)["accountId"] == account


def test_a_signed_platform_deauthorization_removes_the_connection_once(billing, org):
    account = billing.connect(org)["accountId"]
    body = _event("account.application.deauthorized", account)
    signature = stripe.WebhookSignature.generate_signature_header(body.decode(), WEBHOOK_SECRET)
    assert billing.connector.ok("POST", "/billing-platform/webhooks", None, data=body,
                                headers={"Stripe-Signature": signature}, status=200) == {
        "received": True, "processed": True}
    assert_problem(billing.connector.get("/billing-connection", org.admin), 404, "billing_not_connected")
    replayed = _post_event(billing, body, signature)
    assert (replayed.status_code, replayed.json()) == (200, {"received": True, "processed": False})


def test_an_unknown_platform_event_type_is_accepted_and_ignored(billing, org):
    account = billing.connect(org)["accountId"]
    body = _event("customer.created", account)
    signature = stripe.WebhookSignature.generate_signature_header(body.decode(), WEBHOOK_SECRET)
    resp = _post_event(billing, body, signature)
    assert (resp.status_code, resp.json()) == (200, {"received": True, "processed": False})
    assert billing.connection(org)["accountId"] == account
