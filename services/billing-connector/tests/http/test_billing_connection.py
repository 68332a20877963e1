"""The connection flow over real HTTP: the admin asks for the start URL, the browser opens it (the
connector binds the flow to that browser with a cookie and redirects it to the stand-in's install
page), installs the app and is redirected to the connector's callback page (spec section 3)."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import requests
from sqlalchemy import select, text, update

from dps_billing.adapters.tokens import TokenSealer
from dps_billing.db.models import BillingConnection, OAuthState

from billing_helpers import CONSOLE_URL, browser_install, outcome_of, start_flow

CALLBACK = "/external/v1/billing-connection/callback"


def authorize(served: str, key: str, **body: str) -> dict:
    resp = requests.post(f"{served}/external/v1/billing-connection/authorize", headers={"x-api-key": key},
                         json=body or None, timeout=10)
    assert resp.status_code == 200, resp.text
    return resp.json()


def connection(served: str, key: str) -> requests.Response:
    return requests.get(f"{served}/external/v1/billing-connection", headers={"x-api-key": key}, timeout=10)


def test_the_start_url_sets_the_browser_cookie_and_redirects_to_the_platform(served, fake_api, settings):
    org = fake_api.organization()
    link = authorize(served, org.admin.key)
    assert "authorizeUrl" not in link  # a platform URL usable without the browser binding is never handed out
    start = urlsplit(link["startUrl"])
    assert f"{start.scheme}://{start.netloc}{start.path}" == f"{served}/external/v1/billing-connection/start"
    assert link["expiresAt"]
    resp = requests.get(link["startUrl"], allow_redirects=False, timeout=10)
    assert resp.status_code == 303
    assert resp.headers["Cache-Control"] == "no-store" and resp.headers["Referrer-Policy"] == "no-referrer"
    parts = urlsplit(resp.headers["Location"])
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == settings.billing_marketplace_url + "/oauth/v2/authorize"
    query = parse_qs(parts.query)
    assert query["client_id"] == [settings.billing_client_id]
    assert query["redirect_uri"] == [settings.billing_redirect_uri]
    assert "." in query["state"][0] and "scope" not in query
    cookie = resp.headers["Set-Cookie"]
    assert cookie.startswith("dps_billing_connect=")
    attributes = [part.strip().lower() for part in cookie.split(";")]
    assert "httponly" in attributes and "samesite=lax" in attributes
    assert "path=/external/v1/billing-connection" in attributes
    assert "secure" not in attributes  # served over http here
    assert any(a.startswith("max-age=") and 0 < int(a.split("=")[1]) <= 600 for a in attributes)


def test_a_start_url_works_once_and_stores_no_secret_in_clear(served, fake_api, committed_tx):
    org = fake_api.organization()
    start_url = authorize(served, org.admin.key)["startUrl"]
    ticket = parse_qs(urlsplit(start_url).query)["ticket"][0]
    first = requests.get(start_url, allow_redirects=False, timeout=10)
    assert first.status_code == 303
    nonce = first.cookies["dps_billing_connect"]
    again = requests.get(start_url, allow_redirects=False, timeout=10)
    assert again.status_code == 400 and outcome_of(again) == "ticket_invalid"
    assert again.headers["Content-Type"].startswith("text/html") and "Set-Cookie" not in again.headers
    with committed_tx.read() as session:
        rows = session.execute(text("SELECT * FROM billing_oauth_states WHERE organization_id = :o"),
                               {"o": org.id}).mappings().all()
    stored = repr([dict(row) for row in rows])
    assert ticket not in stored and nonce not in stored
    assert ticket.encode() not in b"".join(bytes(r["ticket_hash"]) for r in rows)


def test_an_expired_start_url_is_refused(served, fake_api, committed_tx):
    org = fake_api.organization()
    start_url = authorize(served, org.admin.key)["startUrl"]
    with committed_tx() as session:
        session.execute(update(OAuthState).where(OAuthState.organization_id == org.id)
                        .values(ticket_expires_at=OAuthState.ticket_expires_at - timedelta(minutes=6)))
    resp = requests.get(start_url, allow_redirects=False, timeout=10)
    assert resp.status_code == 400 and outcome_of(resp) == "ticket_invalid"


def test_a_state_completed_in_another_browser_is_refused(served, fake_api, stand_in):
    """RFC 6749 section 10.12: organization A's admin started the flow; an attacker completes A's state
    with a code from an install of their own (organization B's account) in their own browser."""
    org_a, attacker = fake_api.organization(), fake_api.organization()
    browser_a, state_a = start_flow(served, org_a.admin.key)
    attacker_browser, _ = start_flow(served, attacker.admin.key)  # holds a cookie, for another flow
    attacker_code = stand_in.install()
    for browser in (requests.Session(), attacker_browser):
        resp = browser.get(f"{served}{CALLBACK}", params={"code": attacker_code, "state": state_a}, timeout=10)
        assert resp.status_code == 400
        assert resp.headers["Content-Type"].startswith("text/html")
        assert outcome_of(resp) == "not_this_browser"
        assert "another browser" in resp.text
    assert connection(served, org_a.admin.key).status_code == 404
    # the refused attempts did not burn A's flow: A's own browser still completes it with A's own code
    with browser_a:
        own = browser_a.get(f"{served}{CALLBACK}", params={"code": stand_in.install(), "state": state_a}, timeout=10)
    assert outcome_of(own) == "connected"
    assert connection(served, org_a.admin.key).json()["status"] == "connected"


def test_a_return_url_must_be_under_the_console_url(served, fake_api):
    org = fake_api.organization()
    for bad in ("https://evil.example/console", "https://console.example.evil.test/console/x",
                "https://console.example/consolex", "http://console.example/console/settings", "/console"):
        resp = requests.post(f"{served}/external/v1/billing-connection/authorize",
                             headers={"x-api-key": org.admin.key}, json={"returnUrl": bad}, timeout=10)
        assert resp.status_code == 400, bad
        assert resp.json()["errors"][0]["field"] == "returnUrl"
    assert authorize(served, org.admin.key, returnUrl=CONSOLE_URL + "/settings/billing?tab=1")["startUrl"]


def _to_the_console(served: str, browser: requests.Session, start_url: str, decision: str) -> str:
    """The browser's way from the start URL through the install page to the callback; where the
    callback sends it next (not followed: the console is not served here)."""
    page = browser.get(start_url, timeout=10)
    action = re.search(r'<form method=post action="([^"]*)">', page.text).group(1)  # type: ignore[union-attr]
    form = dict(re.findall(r'<input type=hidden name=(\w+) value="([^"]*)">', page.text))
    parts = urlsplit(page.url)
    install = browser.post(f"{parts.scheme}://{parts.netloc}{html.unescape(action)}",
                           data={**{k: html.unescape(v) for k, v in form.items()}, "decision": decision},
                           allow_redirects=False, timeout=10)
    assert install.headers["Location"].startswith(f"{served}{CALLBACK}?")
    landed = browser.get(install.headers["Location"], allow_redirects=False, timeout=10)
    assert landed.status_code == 303, landed.text
    assert landed.headers["Set-Cookie"].startswith('dps_billing_connect="";')  # the cookie is spent
    return landed.headers["Location"]


def test_with_a_return_url_the_callback_sends_the_browser_back_with_the_outcome(served, fake_api):
    org = fake_api.organization()
    back = CONSOLE_URL + "/settings/billing?tab=1"
    with requests.Session() as browser:
        start_url = authorize(served, org.admin.key, returnUrl=back)["startUrl"]
        assert _to_the_console(served, browser, start_url, "install") == back + "&billing=connected"
        assert connection(served, org.admin.key).json()["status"] == "connected"
        start_url = authorize(served, org.admin.key, returnUrl=back)["startUrl"]
        assert _to_the_console(served, browser, start_url, "cancel") == back + "&billing=error&code=denied"


def test_install_connects_and_the_connection_reads_back(served, fake_api, stand_in, committed_tx, settings):
    org = fake_api.organization()
    page = browser_install(authorize(served, org.admin.key)["startUrl"])
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
    page = browser_install(authorize(served, org.admin.key)["startUrl"], decision="cancel")
    assert outcome_of(page) == "denied"
    assert "denied or cancelled" in page.text
    assert connection(served, org.admin.key).status_code == 404


def test_a_state_is_good_for_one_callback_only(served, fake_api, stand_in):
    org = fake_api.organization()
    browser, state = start_flow(served, org.admin.key)
    nonce = browser.cookies["dps_billing_connect"]
    with browser:
        first = browser.get(f"{served}{CALLBACK}", params={"code": stand_in.install(), "state": state}, timeout=10)
        assert outcome_of(first) == "connected"
    # the callback spent the cookie; even sent again by hand, the state is not accepted twice
    again = requests.get(f"{served}{CALLBACK}", params={"code": stand_in.install(), "state": state},
                         cookies={"dps_billing_connect": nonce}, timeout=10)
    assert again.status_code == 400
    assert outcome_of(again) == "state_used"


def test_an_expired_state_is_refused(served, fake_api, committed_tx, stand_in):
    org = fake_api.organization()
    browser, state = start_flow(served, org.admin.key)
    code = stand_in.install()
    # the signature holds the expiry: a link past it is refused whatever its row says
    with committed_tx() as session:
        session.execute(update(OAuthState).where(OAuthState.organization_id == org.id)
                        .values(expires_at=OAuthState.expires_at - timedelta(minutes=11)))
    with browser:
        resp = browser.get(f"{served}{CALLBACK}", params={"code": code, "state": state}, timeout=10)
    assert resp.status_code == 400
    assert outcome_of(resp) == "state_used"  # the row says expired: it cannot be consumed


def test_a_tampered_or_missing_state_is_refused(served, fake_api, stand_in):
    org = fake_api.organization()
    browser, state = start_flow(served, org.admin.key)
    callback = f"{served}{CALLBACK}"
    body, _, mac = state.partition(".")
    forged = browser.get(callback, params={"code": stand_in.install(), "state": body + "x." + mac}, timeout=10)
    assert forged.status_code == 400 and outcome_of(forged) == "state_invalid"
    missing = requests.get(callback, params={"code": stand_in.install()}, timeout=10)
    assert missing.status_code == 400 and outcome_of(missing) == "state_invalid"
    assert "Traceback" not in forged.text + missing.text


def test_a_code_used_twice_is_refused(served, fake_api, stand_in):
    org = fake_api.organization()
    code = stand_in.install()
    first_browser, first_state = start_flow(served, org.admin.key)
    second_browser, second_state = start_flow(served, org.admin.key)
    callback = f"{served}{CALLBACK}"
    first = first_browser.get(callback, params={"code": code, "state": first_state}, timeout=10)
    assert outcome_of(first) == "connected"
    second = second_browser.get(callback, params={"code": code, "state": second_state}, timeout=10)
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
