"""The console's pages against the real api, dispatcher and connector: API keys (issue with the
secret shown once after the redirect, rotate, revoke, each destructive action confirmed), the team's
API-key access, who sees what (view only: a 403 page; forged POSTs refused), another organization's
ids answered 404, the services' field errors beside the fields, webhooks and the billing integration."""

from __future__ import annotations

import html
import re
from collections import Counter

import pytest
import requests

from dps_console.composition import build_http
from dps_console.settings import Settings

from console_helpers import Browser, watch_calls


@pytest.fixture
def pages(services_env, tx):
    return build_http(Settings.from_env(services_env), tx=tx)


@pytest.fixture
def whoami(api_origin, tls_files):
    def call(key: str) -> requests.Response:
        return requests.get(api_origin + "/external/v1/whoami", headers={"x-api-key": key}, verify=tls_files["ca"])

    return call


def _secret(page_text: str) -> str:
    found = re.search(r'id="secret" type="text" readonly value="([^"]+)"', page_text)
    assert found, page_text
    return found.group(1)


def _key_id(list_text: str, name: str) -> str:
    row = next(r for r in list_text.split("<tr>") if f">{name}</th>" in r)
    found = re.search(r"/console/api-keys/([A-Za-z0-9_-]+)/rotate", row)
    assert found, row
    return found.group(1)


def test_an_admin_issues_a_key_for_a_user_sees_the_secret_once_then_rotates_and_revokes_it(pages, mailbox, org, whoami):
    admin = Browser(pages)
    admin.sign_in(mailbox, org.admin.email)
    form = admin.open("/console/api-keys/new")
    assert form.status_code == 200
    assert org.user.user_id in form.text  # the acting user is chosen among the team

    issued = admin.post("/console/api-keys/new", {"name": "CRM sync", "role": "user", "userId": org.user.user_id})
    assert issued.status_code == 303, issued.text  # POST, redirect, GET: the secret is on the next page
    shown = admin.get(issued.headers["location"])
    secret = _secret(shown.text)
    assert secret.startswith("dps_") and 'class="copy"' in shown.text and secret not in issued.text
    assert whoami(secret).status_code == 200
    again = admin.get(issued.headers["location"])  # a reload: shown once
    assert again.status_code == 200 and "this secret was shown once" in again.text and secret not in again.text

    listed = admin.get("/console/api-keys")
    assert "CRM sync" in listed.text and secret not in listed.text
    assert "_".join(secret.split("_")[:2]) in listed.text  # the prefix dps_<keyid> (a secret may hold "_")
    key_id = _key_id(listed.text, "CRM sync")

    confirm = admin.open(f"/console/api-keys/{key_id}/rotate?name=another%20name")  # the api's name, never the URL's
    assert confirm.status_code == 200 and "Rotate the API key “CRM sync”?" in confirm.text
    assert "another name" not in confirm.text
    rotated = admin.post(f"/console/api-keys/{key_id}/rotate")
    assert rotated.status_code == 303
    new_secret = _secret(admin.get(rotated.headers["location"]).text)
    assert new_secret != secret
    assert whoami(secret).status_code == 401 and whoami(new_secret).status_code == 200

    admin.open(f"/console/api-keys/{key_id}/revoke")
    revoked = admin.post(f"/console/api-keys/{key_id}/revoke")
    assert revoked.status_code == 303 and revoked.headers["location"] == "/console/api-keys"
    after = admin.get("/console/api-keys")
    assert "is revoked" in after.text and 'role="status"' in after.text
    assert whoami(new_secret).status_code == 401
    assert "is revoked" not in admin.get("/console/api-keys").text  # the notice is shown once


def test_a_view_only_person_sees_no_keys_and_their_forged_post_is_refused_by_the_api(pages, mailbox, org):
    viewer = Browser(pages)
    viewer.sign_in(mailbox, org.viewer.email)
    home = viewer.get("/console")
    assert "your role is view only" in home.text and 'href="/console/api-keys"' not in home.text
    keys = viewer.get("/console/api-keys")
    assert keys.status_code == 403
    assert "<table" not in keys.text and 'href="/console/api-keys/new"' not in keys.text
    assert viewer.get("/console/api-keys/new").status_code == 403  # the page is not there: no form

    forged = viewer.post("/console/api-keys/new", {"name": "mine", "role": "view only"})
    assert forged.status_code == 403 and 'name="name"' not in forged.text


def test_access_granted_by_an_admin_lets_a_user_manage_own_keys_no_higher_than_their_role(pages, mailbox, org):
    admin = Browser(pages)
    admin.sign_in(mailbox, org.admin.email)
    team = admin.get("/console/team")
    assert team.status_code == 200 and org.user.email in team.text
    granted = admin.post(f"/console/team/{org.user.user_id}/api-key-access", {"granted": "true"})
    assert granted.status_code == 303
    assert "now has API-key access" in admin.get("/console/team").text

    user = Browser(pages)
    user.sign_in(mailbox, org.user.email)
    assert 'href="/console/api-keys"' in user.get("/console").text
    form = user.open("/console/api-keys/new")
    assert 'value="admin"' not in form.text  # not offered
    too_high = user.post("/console/api-keys/new", {"name": "sneaky", "role": "admin"})
    assert too_high.status_code == 403
    assert 'id="role-errors"' in too_high.text and 'aria-invalid="true"' in too_high.text
    own = user.post("/console/api-keys/new", {"name": "my script", "role": "user"})
    assert own.status_code == 303
    assert "my script" in user.get("/console/api-keys").text

    admin.open(f"/console/team/{org.user.user_id}/api-key-access")
    withdrawn = admin.post(f"/console/team/{org.user.user_id}/api-key-access", {"granted": "false"})
    assert withdrawn.status_code == 303
    # the user's console credential ended with the access: their next page asks them to sign in again
    again = user.get("/console/api-keys")
    assert again.status_code == 303 and again.headers["location"] == "/console/sign-in?ended=1"


def test_a_user_without_access_is_refused_the_team_by_the_api(pages, mailbox, org):
    someone = org.member("user", "plain-user@console-co.example")
    user = Browser(pages)
    user.sign_in(mailbox, someone.email)
    home = user.get("/console")
    assert "your role is user and you have no API-key access" in home.text
    refused = user.get("/console/team")
    assert refused.status_code == 403 and "cannot manage the team" in refused.text


def test_another_organizations_ids_are_not_found(pages, mailbox, org, other_org):
    other_admin = Browser(pages)
    other_admin.sign_in(mailbox, other_org.admin.email)
    assert other_admin.open(f"/console/api-keys/{org.admin.key_row_id}/revoke").status_code == 404
    other_admin.get("/console/api-keys")
    revoke = other_admin.post(f"/console/api-keys/{org.admin.key_row_id}/revoke")
    assert revoke.status_code == 404 and "Page not found" in revoke.text
    assert other_admin.get("/console/webhooks/01a21390-1e93-7d46-97d4-cba121e02c6b").status_code == 404
    assert other_admin.get("/console/webhooks/..%2F..%2Fapi-keys").status_code == 404


def test_webhook_endpoints_from_creation_to_deletion(pages, mailbox, org):
    admin = Browser(pages)
    admin.sign_in(mailbox, org.admin.email)
    form = admin.open("/console/webhooks/new")
    assert form.status_code == 200 and 'value="quote.approved"' in form.text

    wrong = admin.post("/console/webhooks/new", [("url", "ftp://nowhere"), ("eventTypes", "quote.approved")])
    assert wrong.status_code == 400
    assert 'id="url-errors"' in wrong.text and 'value="ftp://nowhere"' in wrong.text

    created = admin.post("/console/webhooks/new", [("url", "https://127.0.0.1:9/hooks"), ("description", "CRM"),
                                                   ("eventTypes", "quote.approved")])
    assert created.status_code == 303, created.text
    shown = admin.get(created.headers["location"])
    assert _secret(shown.text).startswith("whsec_")
    endpoint_id = re.search(r'href="/console/webhooks/([0-9a-f-]{36})"', shown.text).group(1)

    listed = admin.get("/console/webhooks")
    assert "https://127.0.0.1:9/hooks" in listed.text and "ACTIVE" in listed.text
    admin.get(f"/console/webhooks/{endpoint_id}")
    assert admin.post(f"/console/webhooks/{endpoint_id}/pause").status_code == 303
    assert "PAUSED" in admin.get(f"/console/webhooks/{endpoint_id}").text
    assert admin.post(f"/console/webhooks/{endpoint_id}/resume").status_code == 303
    page = admin.get(f"/console/webhooks/{endpoint_id}")
    assert "ACTIVE" in page.text and "The endpoint is resumed." in page.text

    edit = admin.open(f"/console/webhooks/{endpoint_id}/edit")
    assert 'value="quote.approved" checked' in edit.text
    saved = admin.post(f"/console/webhooks/{endpoint_id}/edit", [("url", "https://127.0.0.1:9/hooks2"), ("description", "CRM 2")])
    assert saved.status_code == 303
    assert "every event type" in admin.get(f"/console/webhooks/{endpoint_id}").text

    admin.get(f"/console/webhooks/{endpoint_id}")
    assert admin.post(f"/console/webhooks/{endpoint_id}/test").status_code == 303
    log = admin.get(f"/console/webhooks/{endpoint_id}/deliveries")
    assert log.status_code == 200 and "(test)" in log.text
    assert "No deliveries with status SUCCESS" in admin.get(f"/console/webhooks/{endpoint_id}/deliveries?status=SUCCESS").text
    delivery_id = re.search(rf"/console/webhooks/{endpoint_id}/deliveries/([0-9a-f-]{{36}})", log.text).group(1)
    delivery = admin.get(f"/console/webhooks/{endpoint_id}/deliveries/{delivery_id}")
    assert delivery.status_code == 200 and "Attempts" in delivery.text
    retried = admin.post(f"/console/webhooks/{endpoint_id}/deliveries/{delivery_id}/retry")
    assert retried.status_code == 303
    assert retried.headers["location"].startswith(f"/console/webhooks/{endpoint_id}/deliveries/")
    assert not retried.headers["location"].endswith(delivery_id)
    assert "The delivery is sent again." in admin.get(retried.headers["location"]).text
    assert admin.get(f"/console/webhooks/{endpoint_id}/deliveries").text.count("(test)") == 2

    admin.open(f"/console/webhooks/{endpoint_id}/rotate-secret")
    rotated = admin.post(f"/console/webhooks/{endpoint_id}/rotate-secret")
    assert rotated.status_code == 303 and _secret(admin.get(rotated.headers["location"]).text).startswith("whsec_")

    confirm = admin.open(f"/console/webhooks/{endpoint_id}/delete")
    assert "cannot be undone" in confirm.text
    assert admin.post(f"/console/webhooks/{endpoint_id}/delete").status_code == 303
    catalogue = admin.get("/console/webhooks/event-types")
    assert catalogue.status_code == 200 and "quote.approved" in catalogue.text and "Example" in catalogue.text


def test_the_billing_integration_connects_through_the_connector_and_lists_pushes(pages, mailbox, org, billing_origin):
    admin = Browser(pages)
    admin.sign_in(mailbox, org.admin.email)
    status = admin.get("/console/billing")
    assert status.status_code == 200 and "not connected" in status.text
    admin.get("/console/billing")
    connecting = admin.post("/console/billing/connect")
    assert connecting.status_code == 303
    connect = admin.get(connecting.headers["location"])
    assert connect.status_code == 200  # a link onwards: the CSP's form-action keeps form redirects in the console
    assert start_url_of(connect.text).startswith(billing_origin)
    back = admin.get("/console/billing?billing=error&code=access_denied")
    assert "installation was cancelled" in back.text
    pushes = admin.get("/console/billing/pushes")
    assert pushes.status_code == 200 and "No pushes yet." in pushes.text


def test_each_page_calls_each_service_at_most_once(pages, mailbox, org, monkeypatch):
    admin = Browser(pages)
    admin.sign_in(mailbox, org.admin.email)
    admin.get("/console/webhooks/event-types")  # the catalogue is kept a few minutes: the form's second need
    backends = pages.context.backends
    calls = watch_calls(monkeypatch, backends.api, backends.internal, backends.webhooks, backends.billing)
    for path in ("/console", "/console/api-keys", "/console/api-keys/new", "/console/team", "/console/webhooks",
                 "/console/webhooks/new", "/console/webhooks/event-types", "/console/billing", "/console/billing/pushes"):
        calls.clear()
        assert admin.open(path).status_code == 200, path
        per_service = Counter(service for service, _ in calls)
        assert all(count <= 1 for count in per_service.values()), (path, calls)
        if path in ("/console/team", "/console/webhooks", "/console/billing"):
            assert sum(per_service.values()) == 1, (path, calls)  # the calls are seen


def _follow_to_console(browser_http: requests.Session, location: str, form: dict[str, str] | None = None) -> str:
    """A browser's redirects across the connector and the platform, up to the console's address."""
    from urllib.parse import parse_qsl, urlsplit

    if form is not None:
        parts = urlsplit(location)
        resp = browser_http.post(location.split("?")[0], data={**dict(parse_qsl(parts.query)), **form},
                                 allow_redirects=False, timeout=10)
    else:
        resp = browser_http.get(location, allow_redirects=False, timeout=10)
    while resp.status_code in (301, 302, 303, 307) and not resp.headers["location"].startswith("http://console.test"):
        resp = browser_http.get(resp.headers["location"], allow_redirects=False, timeout=10)
    assert resp.status_code in (302, 303), resp.text[:500]
    return resp.headers["location"]


def test_connecting_the_billing_platform_comes_back_to_the_console_and_disconnects(pages, mailbox, other_org):
    admin = Browser(pages)
    admin.sign_in(mailbox, other_org.admin.email)
    assert "not connected" in admin.get("/console/billing").text
    start = start_url_of(admin.get(admin.post("/console/billing/connect").headers["location"]).text)

    browser_http = requests.Session()
    browser_http.trust_env = False
    install_page = browser_http.get(start, timeout=10)  # the connector's start URL: to the platform's install page
    assert install_page.status_code == 200 and "Install" in install_page.text
    back = _follow_to_console(browser_http, install_page.url, {"decision": "install"})
    assert back == "http://console.test/console/billing?billing=connected"

    connected = admin.get(back)
    assert "The billing platform is connected." in connected.text
    assert "connected</span>" in connected.text and "acct_" in connected.text

    confirm = admin.open("/console/billing/disconnect")
    assert confirm.status_code == 200 and ">Disconnect</button>" in confirm.text
    assert admin.post("/console/billing/disconnect").status_code == 303
    after = admin.get("/console/billing")
    assert "The billing platform is disconnected." in after.text and "not connected" in after.text


def start_url_of(page: str) -> str:
    """The connector's start URL, the link of the "Continue to the billing platform" page."""
    found = re.search(r'<a class="button" href="([^"]+)">Continue to the billing platform</a>', page)
    assert found, "no link to the billing platform"
    return html.unescape(found.group(1))
