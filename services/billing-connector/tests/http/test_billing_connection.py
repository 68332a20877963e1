"""The connection flow over real HTTP: the admin asks for the authorize URL, the browser installs the
app on the stand-in's page and is redirected to the connector's callback page (spec section 3)."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import requests
from sqlalchemy import select, update

from dps_billing.db.models import BillingConnection, OAuthState
from dps_billing.tokens import TokenSealer

from billing_helpers import browser_install, outcome_of


def authorize(served: str, key: str) -> dict:
    resp = requests.post(f"{served}/external/v1/billing-connection/authorize", headers={"x-api-key": key}, timeout=10)
    assert resp.status_code == 200, resp.text
    return resp.json()


def connection(served: str, key: str) -> requests.Response:
    return requests.get(f"{served}/external/v1/billing-connection", headers={"x-api-key": key}, timeout=10)


def test_the_authorize_url_carries_client_id_redirect_uri_and_a_signed_state(served, fake_api, settings):
    org = fake_api.organization()
    link = authorize(served, org.admin.key)
    parts = urlsplit(link["authorizeUrl"])
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == settings.billing_marketplace_url + "/oauth/v2/authorize"
    query = parse_qs(parts.query)
    assert query["client_id"] == [settings.billing_client_id]
    assert query["redirect_uri"] == [settings.billing_redirect_uri]
    assert "." in query["state"][0] and "scope" not in query
    assert link["expiresAt"]


def test_install_connects_and_the_connection_reads_back(served, fake_api, stand_in, committed_tx, settings):
    org = fake_api.organization()
    page = browser_install(authorize(served, org.admin.key)["authorizeUrl"])
    assert page.status_code == 200
    assert outcome_of(page) == "connected"
    assert "Connected to the billing platform account acct_" in page.text
    assert settings.return_url in page.text
    body = connection(served, org.admin.key).json()
    assert body["status"] == "connected" and body["accountId"].startswith("acct_")
    assert body["mode"] == "test" and body["livemode"] is False
    assert body["connectedBy"] == str(org.admin.user_id)
    assert body["accountId"] in stand_in.installed_accounts()
    with committed_tx.read() as session:
        row = session.scalars(select(BillingConnection).where(BillingConnection.organization_id == org.id)).one()
        sealer = TokenSealer(settings.billing_token_key)
        access = sealer.open(row.id, row.access_token_sealed)
        assert access.encode() not in row.access_token_sealed  # sealed, not stored in clear
        assert row.access_expires_at - row.connected_at <= timedelta(hours=1)
        assert row.access_expires_at - row.connected_at > timedelta(minutes=59)


def test_cancel_on_the_platform_is_a_denial(served, fake_api):
    org = fake_api.organization()
    page = browser_install(authorize(served, org.admin.key)["authorizeUrl"], decision="cancel")
    assert outcome_of(page) == "denied"
    assert "denied or cancelled" in page.text
    assert connection(served, org.admin.key).status_code == 404


def test_a_state_is_good_for_one_callback_only(served, fake_api):
    org = fake_api.organization()
    link = authorize(served, org.admin.key)["authorizeUrl"]
    assert outcome_of(browser_install(link)) == "connected"
    again = browser_install(link)
    assert again.status_code == 400
    assert outcome_of(again) == "state_used"


def test_an_expired_state_is_refused(served, fake_api, committed_tx, stand_in):
    org = fake_api.organization()
    link = authorize(served, org.admin.key)["authorizeUrl"]
    state = parse_qs(urlsplit(link).query)["state"][0]
    code = stand_in.install()
    # the signature holds the expiry: a link past it is refused whatever its row says
    with committed_tx() as session:
        session.execute(update(OAuthState).where(OAuthState.organization_id == org.id)
                        .values(expires_at=OAuthState.expires_at - timedelta(minutes=11)))
    resp = requests.get(f"{served}/external/v1/billing-connection/callback", params={"code": code, "state": state},
                        timeout=10)
    assert resp.status_code == 400
    assert outcome_of(resp) == "state_used"  # the row says expired: it cannot be consumed


def test_a_tampered_or_missing_state_is_refused(served, fake_api, stand_in):
    org = fake_api.organization()
    link = authorize(served, org.admin.key)["authorizeUrl"]
    state = parse_qs(urlsplit(link).query)["state"][0]
    callback = f"{served}/external/v1/billing-connection/callback"
    body, _, mac = state.partition(".")
    forged = requests.get(callback, params={"code": stand_in.install(), "state": body + "x." + mac}, timeout=10)
    assert forged.status_code == 400 and outcome_of(forged) == "state_invalid"
    missing = requests.get(callback, params={"code": stand_in.install()}, timeout=10)
    assert missing.status_code == 400 and outcome_of(missing) == "state_invalid"
    assert "Traceback" not in forged.text + missing.text


def test_a_code_used_twice_is_refused(served, fake_api, stand_in):
    org = fake_api.organization()
    code = stand_in.install()
    first_state = parse_qs(urlsplit(authorize(served, org.admin.key)["authorizeUrl"]).query)["state"][0]
    second_state = parse_qs(urlsplit(authorize(served, org.admin.key)["authorizeUrl"]).query)["state"][0]
    callback = f"{served}/external/v1/billing-connection/callback"
    first = requests.get(callback, params={"code": code, "state": first_state}, timeout=10)
    assert outcome_of(first) == "connected"
    second = requests.get(callback, params={"code": code, "state": second_state}, timeout=10)
    assert second.status_code == 400
    assert outcome_of(second) == "code_invalid"
    assert "already used" in second.text


def test_only_admin_keys_manage_the_connection(served, fake_api):
    org = fake_api.organization()
    for member in (org.user, org.viewer):
        resp = requests.post(f"{served}/external/v1/billing-connection/authorize",
                             headers={"x-api-key": member.key}, timeout=10)
        assert resp.status_code == 403
        assert resp.json()["requiredScope"] == "billing:manage"
    assert requests.get(f"{served}/external/v1/billing-connection", timeout=10).status_code == 401
