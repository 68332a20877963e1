"""The console as people use it, in headless Chromium against the console served by gunicorn over
HTTPS with the real api, dispatcher and connector behind it and the sign-in mail received by a real
SMTP server: signing in from the mail, API keys (the secret shown once with its copy button; the key
answers the api; rotation and revocation end the old secret at the api within 2 s), webhooks (an
endpoint with event types from the catalogue, a test event delivered and attempted, a retry), the
billing integration connected through the platform stand-in and disconnected, who may do what (no
admin role offered to a user, forged POSTs refused), the session cookie's flags and signing out.

Every page visited is saved as a screenshot (``shot``, .run/screenshots/console/)."""

from __future__ import annotations

import re
import time

import pytest
from console_browser import (
    ask_for_link,
    click_to,
    csrf_of,
    forge_post,
    ok,
    open_link,
    secret_shown,
    sign_in,
)

from dps_console.composition import build_http
from dps_console.settings import Settings

pytestmark = pytest.mark.usefixtures("console")



WAIT_FOR_DELIVERY_SECONDS = 15.0  # the worker attempts the test event at once; a loaded machine is slow


def _session_cookie(page):
    return next((c for c in page.context.cookies() if c["name"] == "__Host-dps_console"), None)


def section(page, name: str) -> None:
    """Follows a link of the header's navigation."""
    with page.expect_navigation() as landed:
        page.get_by_role("navigation", name="Sections").get_by_role("link", name=name, exact=True).click()
    ok(landed.value)


def _row(page, name: str):
    return page.get_by_role("row").filter(has=page.get_by_role("rowheader", name=name, exact=True))


def test_an_admin_signs_in_from_the_mail_and_issues_rotates_and_revokes_a_key(
        page, console, mailbox, browser_org, whoami, refused_within, shot):
    root = console.root
    ok(page.goto(root + "/sign-in"))
    shot(page, "01-sign-in")
    ask_for_link(page, root, browser_org.admin.email)
    shot(page, "02-sign-in-sent")
    assert _session_cookie(page) is None  # no session before the link is used
    open_link(page, mailbox, browser_org.admin.email)
    shot(page, "03-sign-in-link")
    click_to(page, "Sign in")
    assert page.url == root
    assert "Browser Co" in page.locator("header").inner_text()
    shot(page, "04-home-admin")

    # the cookie: only a random id, HttpOnly, SameSite=Lax, Secure and __Host- over https
    cookies = page.context.cookies()
    assert {c["name"] for c in cookies} <= {"__Host-dps_console", "__Host-dps_console_pre"}
    assert _session_cookie(page) is not None
    for cookie in cookies:  # the session's and the sign-in form's (its CSRF binding)
        assert cookie["httpOnly"] is True and cookie["secure"] is True and cookie["sameSite"] == "Lax"
        assert cookie["path"] == "/" and cookie["domain"] == "127.0.0.1"  # host-only: no Domain attribute
    assert page.evaluate("document.cookie") == ""  # scripts cannot read it

    section(page, "API keys")
    shot(page, "05-keys")
    click_to(page, "Issue an API key", role="link")
    shot(page, "06-key-form")
    page.get_by_label("Name").fill("CRM sync")
    page.get_by_label("Role").select_option("user")
    page.get_by_label("Acting user").select_option(browser_org.user.user_id)
    click_to(page, "Issue the key")  # POST, 303, then the page that shows the secret once
    secret = secret_shown(page)
    assert secret.startswith("dps_")
    copy = page.get_by_role("button", name="Copy", exact=True)
    assert copy.is_visible()  # shown by copy.js (the page works without it: the field is selectable)
    copy.click()
    page.get_by_text("Copied.").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == secret
    shot(page, "07-key-secret")
    assert whoami(secret) == 200

    ok(page.goto(root + "/api-keys"))
    assert secret not in page.content()  # shown once
    row = _row(page, "CRM sync")
    assert "_".join(secret.split("_", 2)[:2]) in row.inner_text()  # the prefix dps_<keyid> (the secret may hold "_")

    with page.expect_navigation():
        row.get_by_role("link", name="Rotate CRM sync").click()
    assert "Rotate the API key “CRM sync”?" in page.get_by_role("heading", level=1).inner_text()
    shot(page, "08-confirm-rotate-key")
    click_to(page, "Rotate")
    new_secret = secret_shown(page)
    assert new_secret != secret and new_secret.startswith("dps_")
    assert refused_within(secret) == 401
    assert whoami(new_secret) == 200

    ok(page.goto(root + "/api-keys"))
    with page.expect_navigation():
        _row(page, "CRM sync").get_by_role("link", name="Revoke CRM sync").click()
    shot(page, "09-confirm-revoke-key")
    click_to(page, "Revoke")
    assert page.url == root + "/api-keys"
    assert "is revoked" in page.get_by_role("status").first.inner_text()
    assert _row(page, "CRM sync").count() == 0  # revoked keys are left out of the default view
    ok(page.goto(root + "/api-keys?status=all"))
    assert "revoked" in _row(page, "CRM sync").inner_text()
    shot(page, "10-keys-after-revoke")
    assert refused_within(new_secret) == 401


def test_a_webhook_endpoint_with_types_from_the_catalogue_is_tested_and_its_delivery_retried(
        page, console, mailbox, browser_org, receiver, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    section(page, "Webhooks")
    shot(page, "11-webhooks-empty")
    click_to(page, "Event catalogue", role="link")
    assert page.get_by_role("heading", name="quote.approved", exact=True).is_visible()
    shot(page, "12-event-catalogue")
    ok(page.goto(root + "/webhooks"))
    click_to(page, "Add an endpoint", role="link")
    shot(page, "13-webhook-form")
    boxes = page.get_by_role("checkbox")
    assert boxes.count() >= 2
    picked = [boxes.nth(i).get_attribute("value") for i in range(2)]
    for name in picked:
        page.locator(f'input[name="eventTypes"][value="{name}"]').check()
    url = receiver.url + "/browser-crm"  # its own path: other tests of the session add endpoints too
    page.get_by_label("URL").fill(url)
    page.get_by_label("Description").fill("Browser CRM")
    click_to(page, "Add the endpoint")
    assert secret_shown(page).startswith("whsec_")
    shot(page, "14-webhook-secret")

    ok(page.goto(root + "/webhooks"))
    shot(page, "15-webhooks")
    with page.expect_navigation():
        page.get_by_role("link", name=url, exact=True).click()
    detail_url = page.url.split("?")[0]  # without its view token (a page of buttons: issue 25)
    facts = page.locator("dl.facts").inner_text()
    assert "ACTIVE" in facts and all(name in facts for name in picked)
    shot(page, "16-webhook-detail")

    click_to(page, "Send a test event")
    assert page.url.split("?")[0] == detail_url  # a fresh view of it
    click_to(page, "Delivery log", role="link")
    deliveries_url = page.url
    # the worker attempts it at once; the page is reloaded until the attempt shows (bounded)
    deadline = time.monotonic() + WAIT_FOR_DELIVERY_SECONDS
    while "SUCCESS" not in page.locator("table").inner_text() and time.monotonic() < deadline:
        time.sleep(0.2)
        ok(page.reload())
    rows = page.locator("tbody tr")
    assert rows.count() == 1
    assert "(test)" in rows.first.inner_text() and "SUCCESS" in rows.first.inner_text()
    assert "200" in rows.first.inner_text()  # the receiver's answer
    assert receiver.received, "the receiver got nothing"
    shot(page, "17-deliveries")

    with page.expect_navigation():
        rows.first.get_by_role("link").click()
    attempts = page.get_by_role("table", name="Every attempt, in order").locator("tbody tr")
    assert attempts.count() == 1
    assert "200" in attempts.first.inner_text() and "received" in attempts.first.inner_text()
    shot(page, "18-delivery")
    first_delivery = page.url
    click_to(page, "Retry this delivery")
    assert page.url != first_delivery and page.url.startswith(deliveries_url + "/")
    assert "The delivery is sent again." in page.get_by_role("status").first.inner_text()
    ok(page.goto(deliveries_url))
    assert page.locator("tbody tr").count() == 2


def test_billing_is_connected_through_the_platform_and_disconnected(page, console, mailbox, browser_org, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    section(page, "Billing integration")
    assert "not connected" in page.get_by_role("main").inner_text()
    shot(page, "19-billing-not-connected")
    click_to(page, "Connect")  # the connector's start URL, as a link: form-action keeps forms in the console
    shot(page, "20-billing-continue")
    click_to(page, "Continue to the billing platform", role="link")  # the start URL, then the install page
    assert page.title().startswith("Install ")
    shot(page, "20-billing-platform-install")
    click_to(page, "Install")  # the connector's callback, then back to the console
    assert page.url.startswith(root + "/billing?billing=connected&view=")  # a page of buttons is a view
    main = page.get_by_role("main").inner_text()
    assert "The billing platform is connected." in main and "acct_" in main
    shot(page, "21-billing-connected")
    click_to(page, "Disconnect", role="link")
    shot(page, "22-confirm-billing-disconnect")
    click_to(page, "Disconnect")
    assert "The billing platform is disconnected." in page.get_by_role("main").inner_text()
    assert "not connected" in page.get_by_role("main").inner_text()
    click_to(page, "Recent pushes", role="link")
    shot(page, "23-billing-pushes")


def test_a_user_with_access_is_not_offered_the_admin_role_and_a_forged_post_is_refused(
        page, new_page, console, mailbox, browser_org, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    section(page, "Team")
    shot(page, "24-team")
    user_row = _row(page, browser_org.user.email.split("@")[0])
    if user_row.get_by_role("button", name="Grant access").count():
        with page.expect_navigation():
            user_row.get_by_role("button", name="Grant access").click()
    assert "granted" in _row(page, browser_org.user.email.split("@")[0]).inner_text()

    user = new_page()
    sign_in(user, root, mailbox, browser_org.user.email)
    section(user, "API keys")
    click_to(user, "Issue an API key", role="link")
    offered = user.get_by_label("Role").locator("option").all_inner_texts()
    assert "admin" not in offered and "user" in offered
    assert user.get_by_label("Acting user").count() == 0
    shot(user, "25-key-form-user")

    forged = forge_post(user, root + "/api-keys/new", {"name": "sneaky", "role": "admin"})
    assert forged.status == 403
    assert user.locator("#role-errors").is_visible()
    assert user.get_by_label("Role").get_attribute("aria-invalid") == "true"
    shot(user, "26-key-form-role-too-high")
    assert "sneaky" not in ok(user.goto(root + "/api-keys")).text()

    # the admin withdraws the access again (a confirmation page)
    ok(page.goto(root + "/team"))
    with page.expect_navigation():
        _row(page, browser_org.user.email.split("@")[0]).get_by_role("link", name=re.compile("^Withdraw access")).click()
    shot(page, "27-confirm-withdraw-access")
    click_to(page, "Withdraw access")
    assert "no" in _row(page, browser_org.user.email.split("@")[0]).get_by_role("cell").nth(2).inner_text()


def test_a_view_only_person_sees_no_keys_and_a_forged_post_is_403(page, console, mailbox, browser_org, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.viewer.email)
    assert "your role is view only" in page.get_by_role("main").inner_text()
    assert page.get_by_role("link", name="API keys").count() == 0
    shot(page, "28-home-view-only")
    ok(page.goto(root + "/api-keys"), 403)
    assert "You do not manage API keys" in page.get_by_role("main").inner_text()
    assert page.get_by_role("table").count() == 0
    assert page.get_by_role("link", name="Issue an API key").count() == 0
    shot(page, "29-keys-view-only")
    forged = forge_post(page, root + "/api-keys/new", {"name": "mine", "role": "view only"})
    assert forged.status == 403
    assert page.get_by_label("Name").count() == 0  # a refusal page, no form
    shot(page, "30-forged-post-refused")


def _credential(console, cookie_value: str) -> str:
    """The session's console credential as the console keeps it (sealed in its database)."""
    app = build_http(Settings.from_env(console.env))
    try:
        return app.context.sessions.load(cookie_value).credential
    finally:
        app.context.tx.dispose()


def test_sign_out_ends_the_session_and_the_api_refuses_its_credential_within_2_s(
        page, new_page, console, mailbox, browser_org, whoami, refused_within, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.user.email)
    cookie = _session_cookie(page)
    assert cookie is not None
    credential = _credential(console, cookie["value"])
    assert whoami(credential) == 200
    assert credential not in page.content() and credential not in cookie["value"]

    click_to(page, "Sign out")
    assert page.url == root + "/sign-in?signed_out=1"
    shot(page, "31-signed-out")
    assert refused_within(credential) == 401
    ok(page.goto(root + "/api-keys"))
    assert page.url.startswith(root + "/sign-in")  # back to the sign-in form

    replay = new_page()  # the old cookie in another browser: no session
    replay.context.add_cookies([{k: cookie[k] for k in ("name", "value", "secure", "httpOnly", "sameSite")}
                                | {"url": console.origin}])
    ok(replay.goto(root + "/api-keys"))
    assert replay.url.startswith(root + "/sign-in")

    assert _session_cookie(page) is None  # the browser no longer holds the session's cookie at all


def test_a_cross_site_post_is_refused(page, console, mailbox, browser_org, receiver):
    """A form on another site (the receiver's origin) posting to the console with a valid token: the
    console refuses it, and the session goes on."""
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    token = csrf_of(page)
    ok(page.goto(receiver.url))
    page.set_content(f'<form method="post" action="{root}/sign-out"><input name="csrf" value="{token}">'
                     '<button>Go</button></form>')
    with page.expect_navigation() as landed:
        page.get_by_role("button", name="Go").click()
    assert landed.value is not None and landed.value.status == 403
    ok(page.goto(root + "/api-keys"))
    assert page.url == root + "/api-keys"  # still signed in


def test_an_unknown_page_is_a_404_page(page, console, mailbox, browser_org, shot):
    ok(page.goto(console.root + "/nowhere"), 404)
    assert page.get_by_role("heading", level=1).inner_text() == "Page not found"
    shot(page, "32-not-found")
