"""No secret the console shows or handles is kept in plaintext, in any table of any of the four
services' databases (the console's own included): a person signs in, issues and rotates a key and
adds a webhook endpoint in the browser; every secret of the way (the sign-in link's token, the
session cookie, the console credential, the keys, the signing secret) is then searched for in every
row of every table (``dps_testing.secrets_at_rest``)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from console_browser import ask_for_link, click_to, ok, open_link, secret_shown, sign_in

from dps_testing.secrets_at_rest import scan_for_secrets

from dps_console.composition import build_http
from dps_console.settings import Settings


def test_no_secret_of_a_console_session_is_stored_in_any_table(page, new_page, console, mailbox, browser_org, receiver,
                                                                databases):
    root, email = console.root, browser_org.admin.email
    shown: dict[str, str] = {}
    sign_in(page, root, mailbox, email)
    shown["used sign-in token"] = parse_qs(urlsplit(mailbox.link_for(email)).query)["token"][0]
    cookie = next(c for c in page.context.cookies() if c["name"] == "__Host-dps_console")
    shown["session cookie"] = cookie["value"]
    shown["console credential"] = _credential(console, cookie["value"])

    ok(page.goto(root + "/api-keys/new"))
    page.get_by_label("Name").fill("Secrets at rest")
    page.get_by_label("Role").select_option("view only")
    click_to(page, "Issue the key")
    shown["issued key"] = secret_shown(page)
    ok(page.goto(root + "/api-keys"))
    with page.expect_navigation():
        page.get_by_role("link", name="Rotate Secrets at rest").click()
    click_to(page, "Rotate")
    shown["rotated key"] = secret_shown(page)
    for label in ("issued key", "rotated key"):  # the part after the public prefix dps_<keyid>_ (it may hold "_" itself)
        shown[label + " (secret part)"] = shown[label].split("_", 2)[2]

    ok(page.goto(root + "/webhooks/new"))
    page.locator('input[name="eventTypes"]').first.check()
    page.get_by_label("URL").fill(receiver.url + "/secrets-at-rest")
    click_to(page, "Add the endpoint")
    shown["webhook signing secret"] = secret_shown(page)

    other = new_page()  # an unused link too, asked for in another browser: its token is as secret
    ask_for_link(other, root, email)
    shown["unused sign-in token"] = parse_qs(urlsplit(mailbox.link_for(email)).query)["token"][0]
    open_link(other, mailbox, email)

    report = scan_for_secrets(databases, shown)
    print(report.summary())
    assert set(databases) == {"api", "dispatcher", "connector", "console"}
    assert report.rows > 0 and report.columns > 0
    assert report.found == [], report.found


def _credential(console, cookie_value: str) -> str:
    app = build_http(Settings.from_env(console.env))
    try:
        return app.context.sessions.load(cookie_value).credential
    finally:
        app.context.tx.dispose()
