"""A console a person can trust (issue 25), in headless Chromium against the console served for real:

- one action per click: a reload after the POST, Back and submit again, a double click never issue,
  rotate, create, test or connect twice; a secret is shown on the page after the redirect, once;
- a stale, foreign or planted session cookie at Sign in does not burn the link;
- people see only what they may do: each role on every URL (403 page, no form), Grant access only
  for people with the user role, a forged grant refused;
- only real names, only the organization's ids: every page that carries an id answers 404 for
  another organization's and a made-up one, and names the item as its service has it;
- the sign-in answer does not wait for the mail: the mail worker sends it afterwards.

Every page these change is saved as a screenshot (``shot``)."""

from __future__ import annotations

import signal
import uuid
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
import requests
from console_browser import ask_for_link, click_to, forge_post, ok, open_link, secret_shown, sign_in

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.usefixtures("console")
SESSION_COOKIE = "__Host-dps_console"

DOUBLE_SUBMIT = """async (label) => {
    const button = [...document.querySelectorAll("main button")].find(b => b.textContent.trim() === label);
    const form = button.form;
    const send = () => fetch(form.action, {method: "POST", body: new URLSearchParams(new FormData(form))})
        .then(answer => answer.text());
    return Promise.all([send(), send()]);
}"""


def double_click(page: Page, label: str) -> list[str]:
    """What a double click on ``label`` sends: the form, as it is on the page, twice at once; the two
    pages answered (after their redirects)."""
    return page.evaluate(DOUBLE_SUBMIT, label)


def rows_named(page: Page, name: str) -> int:
    return page.get_by_role("rowheader", name=name, exact=True).count()


def shows_no_form(page: Page) -> bool:
    """Nothing to fill in or press but the header's Sign out."""
    return page.locator("main form").count() == 0 and page.locator("main input, main select").count() == 0


def submit(page: Page, label: str) -> None:
    """Presses ``label`` and lands where the console sends the person (any success)."""
    with page.expect_navigation() as landed:
        page.get_by_role("button", name=label, exact=True).click()
    assert landed.value is not None and landed.value.status < 300, landed.value.status if landed.value else None


def issue_key(page: Page, root: str, name: str) -> str:
    ok(page.goto(root + "/api-keys/new"))
    page.get_by_label("Name").fill(name)
    submit(page, "Issue the key")
    return secret_shown(page)


# -- one action per click --------------------------------------------------------------------------


def test_a_reload_after_issuing_a_key_issues_no_second_one_and_shows_the_secret_no_more(
        page, console, mailbox, browser_org, whoami, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    ok(page.goto(root + "/api-keys/new"))
    page.get_by_label("Name").fill("Reloaded key")
    click_to(page, "Issue the key")  # POST, 303, GET: the page that shows the secret answers 200
    secret = secret_shown(page)
    assert page.url.startswith(root + "/shown-once/")
    shot(page, "trust-01-key-secret-after-redirect")
    ok(page.reload())
    assert secret not in page.content()
    assert "this secret was shown once" in page.get_by_role("main").inner_text()
    shot(page, "trust-02-key-secret-shown-once")
    ok(page.goto(root + "/api-keys"))
    assert rows_named(page, "Reloaded key") == 1
    assert whoami(secret) == 200


def test_a_reload_after_rotating_a_key_keeps_the_copied_secret_working(
        page, console, mailbox, browser_org, refused_within, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    issue_key(page, root, "Rotated once")
    ok(page.goto(root + "/api-keys"))
    with page.expect_navigation():
        page.get_by_role("link", name="Rotate Rotated once").click()
    click_to(page, "Rotate")
    copied = secret_shown(page)
    ok(page.reload())
    assert "this secret was shown once" in page.get_by_role("main").inner_text()
    assert refused_within(copied) == 200  # not rotated again: the copied secret still works


def test_back_and_submit_again_issues_no_second_key(page, console, mailbox, browser_org, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    ok(page.goto(root + "/api-keys/new"))
    form_url = page.url
    assert "?form=" in form_url  # the page's one-time token is in its address: Back brings the same one
    shot(page, "trust-03-key-form-with-its-token")
    page.get_by_label("Name").fill("Back and again")
    click_to(page, "Issue the key")
    secret = secret_shown(page)
    ok(page.go_back())
    assert page.url == form_url
    page.get_by_label("Name").fill("Back and again")
    click_to(page, "Issue the key")
    assert secret not in page.content()
    assert "this secret was shown once" in page.get_by_role("main").inner_text()
    ok(page.goto(root + "/api-keys"))
    assert rows_named(page, "Back and again") == 1


def test_a_double_click_issues_one_key_and_shows_its_secret_once(page, console, mailbox, browser_org, whoami):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    ok(page.goto(root + "/api-keys/new"))
    page.get_by_label("Name").fill("Double clicked")
    answers = double_click(page, "Issue the key")
    secrets_shown = [a for a in answers if 'id="secret"' in a]
    assert len(secrets_shown) == 1, "the secret is shown on exactly one of the two answers"
    assert any("this secret was shown once" in a for a in answers)
    ok(page.goto(root + "/api-keys"))
    assert rows_named(page, "Double clicked") == 1


def test_an_endpoint_is_added_once_and_its_test_sent_once_whatever_the_clicks(
        page, console, mailbox, browser_org, receiver, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    url = receiver.url + "/trust-once"
    ok(page.goto(root + "/webhooks/new"))
    page.get_by_label("URL").fill(url)
    answers = double_click(page, "Add the endpoint")
    assert sum('id="secret"' in a for a in answers) == 1
    ok(page.goto(root + "/webhooks"))
    assert page.get_by_role("link", name=url, exact=True).count() == 1
    with page.expect_navigation():
        page.get_by_role("link", name=url, exact=True).click()
    endpoint_page = page.url.split("?")[0]  # without its view token

    double_click(page, "Send a test event")
    ok(page.goto(endpoint_page + "/deliveries"))
    assert page.locator("tbody tr").count() == 1  # one test event

    ok(page.goto(endpoint_page + "/rotate-secret"))
    shot(page, "trust-04-confirm-rotate-signing-secret")
    click_to(page, "Rotate secret")
    rotated = secret_shown(page)
    shot(page, "trust-05-signing-secret")
    ok(page.reload())
    assert rotated not in page.content() and "this secret was shown once" in page.content()
    shot(page, "trust-06-signing-secret-shown-once")
    ok(page.goto(endpoint_page + "/delete"))
    assert url in page.get_by_role("heading", level=1).inner_text()  # the endpoint as the dispatcher has it
    shot(page, "trust-13-confirm-revoke-endpoint")


def test_connect_reloaded_shows_the_platforms_link_once(page, console, mailbox, admin_cli, shot):
    root = console.root
    sign_in(page, root, mailbox, admin_cli.organization("Connect reload Co").admin.email)  # never connected
    ok(page.goto(root + "/billing"))
    click_to(page, "Connect")
    link = page.get_by_role("link", name="Continue to the billing platform")
    assert link.count() == 1
    shot(page, "trust-07-billing-continue")
    ok(page.reload())
    assert page.get_by_role("link", name="Continue to the billing platform").count() == 0
    assert "shown once" in page.get_by_role("main").inner_text()


# -- Back to a page of buttons and press again: one action ---------------------------------------------


def deliveries_of(page: Page, endpoint_page: str) -> int:
    ok(page.goto(endpoint_page.split("?")[0] + "/deliveries"))
    return page.locator("tbody tr").count()


def add_endpoint(page: Page, root: str, url: str) -> str:
    """Adds an endpoint delivering to ``url``; the address of its page (a view: ``?view=``)."""
    ok(page.goto(root + "/webhooks/new"))
    page.get_by_label("URL").fill(url)
    submit(page, "Add the endpoint")
    click_to(page, "Go to the endpoint", role="link")
    assert "?view=" in page.url  # the page of buttons carries its view token: Back brings the same tokens
    return page.url


def test_send_test_then_back_and_send_test_again_sends_one_test_event(page, console, mailbox, browser_org, receiver,
                                                                      shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    endpoint_page = add_endpoint(page, root, receiver.url + "/trust-back-test")
    click_to(page, "Send a test event")
    after_first = page.url
    ok(page.go_back())
    assert page.url == endpoint_page
    click_to(page, "Send a test event")  # the same form of the same view: sent where the first went
    shot(page, "trust-14-send-test-back-and-again")
    assert deliveries_of(page, endpoint_page) == 1
    assert after_first != endpoint_page  # the page after the action was a fresh view
    ok(page.goto(endpoint_page.split("?")[0]))  # a fresh view: a deliberate second press acts
    click_to(page, "Send a test event")
    assert deliveries_of(page, endpoint_page) == 2


def test_retry_then_back_and_retry_again_retries_once(page, console, mailbox, browser_org, receiver):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    endpoint_page = add_endpoint(page, root, receiver.url + "/trust-back-retry")
    click_to(page, "Send a test event")
    ok(page.goto(endpoint_page.split("?")[0] + "/deliveries"))
    with page.expect_navigation():
        page.locator("tbody tr a").first.click()
    delivery_page = page.url
    assert "?view=" in delivery_page
    click_to(page, "Retry this delivery")
    retried = page.url
    ok(page.go_back())
    assert page.url == delivery_page
    click_to(page, "Retry this delivery")
    assert page.url.split("?")[0] == retried.split("?")[0]  # where the first retry went
    assert deliveries_of(page, endpoint_page) == 2  # the test event and one retry


def oauth_states(databases: dict[str, str]) -> int:
    with psycopg.connect(databases["connector"], autocommit=True) as db:
        row = db.execute("SELECT count(*) FROM billing_oauth_states").fetchone()
    assert row is not None
    return int(row[0])


def test_connect_then_back_and_connect_again_starts_one_connect_flow(page, console, mailbox, admin_cli, databases):
    root = console.root
    sign_in(page, root, mailbox, admin_cli.organization("Connect back Co").admin.email)  # never connected
    ok(page.goto(root + "/billing"))
    billing_page = page.url
    assert "?view=" in billing_page
    before = oauth_states(databases)
    click_to(page, "Connect")
    assert page.get_by_role("link", name="Continue to the billing platform").count() == 1
    ok(page.go_back())
    assert page.url == billing_page
    click_to(page, "Connect")
    assert page.get_by_role("link", name="Continue to the billing platform").count() == 0
    assert "shown once" in page.get_by_role("main").inner_text()
    assert oauth_states(databases) == before + 1  # one connect flow started at the connector


# -- a stale cookie must not burn a sign-in link -------------------------------------------------------


@pytest.mark.parametrize("kind", ["ended session", "unknown value", "planted value"])
def test_sign_in_works_whatever_session_cookie_the_browser_sends(page, new_page, console, mailbox, browser_org, kind):
    root, email = console.root, browser_org.user.email
    stale = {"unknown value": "u" * 43, "planted value": "planted-by-someone-else"}.get(kind)
    if stale is None:  # a session of this browser that ended between opening the link and Sign in
        other = new_page()
        sign_in(other, root, mailbox, email)
        stale = next(c["value"] for c in other.context.cookies() if c["name"] == SESSION_COOKIE)
        click_to(other, "Sign out")
    ask_for_link(page, root, email)
    open_link(page, mailbox, email)
    page.context.add_cookies([{"name": SESSION_COOKIE, "value": stale, "url": console.origin, "secure": True,
                               "httpOnly": True, "sameSite": "Lax"}])
    click_to(page, "Sign in")
    assert page.url == root, page.url  # signed in, not sent back to the sign-in form
    cookie = next(c for c in page.context.cookies() if c["name"] == SESSION_COOKIE)
    assert cookie["value"] != stale  # never adopted
    assert cookie["expires"] == -1  # a session cookie, not one that expired in 1970
    ok(page.goto(root + "/api-keys"), 200 if browser_org_user_manages_keys(page) else 403)
    assert page.url.startswith(root + "/api-keys")


def browser_org_user_manages_keys(page: Page) -> bool:
    return page.get_by_role("navigation", name="Sections").get_by_role("link", name="API keys").count() == 1


# -- people see only what they may do -----------------------------------------------------------------


def _ids(page: Page, root: str, browser_org: Any, receiver: Any) -> dict[str, str]:
    """As the admin: an endpoint with a delivery, and the ids the role walk visits."""
    ok(page.goto(root + "/webhooks/new"))
    page.get_by_label("URL").fill(receiver.url + "/trust-walk")
    submit(page, "Add the endpoint")
    endpoint = page.get_by_role("link", name="Go to the endpoint").get_attribute("href") or ""
    ok(page.goto(console_url(root, endpoint)))
    click_to(page, "Send a test event")
    ok(page.goto(console_url(root, endpoint) + "/deliveries"))
    delivery = page.locator("tbody tr a").first.get_attribute("href") or ""
    return {"endpoint": endpoint.rsplit("/", 1)[1], "delivery": delivery.rsplit("/", 1)[1],
            "admin_key": browser_org.admin.key_row_id, "user_key": browser_org.user.key_row_id,
            "user": browser_org.user.user_id}


def console_url(root: str, href: str) -> str:
    return root + href.removeprefix("/console")


def every_url(ids: dict[str, str]) -> dict[str, str]:
    """Every page of the console that a person may open (name -> path), the ones with ids included."""
    endpoint, delivery = f"/webhooks/{ids['endpoint']}", f"/webhooks/{ids['endpoint']}/deliveries/{ids['delivery']}"
    return {
        "keys": "/api-keys", "key form": "/api-keys/new",
        "rotate own key": f"/api-keys/{ids['user_key']}/rotate", "revoke own key": f"/api-keys/{ids['user_key']}/revoke",
        "team": "/team", "withdraw access": f"/team/{ids['user']}/api-key-access",
        "webhooks": "/webhooks", "webhook form": "/webhooks/new", "event types": "/webhooks/event-types",
        "endpoint": endpoint, "endpoint traffic 7d": endpoint + "?window=7d", "endpoint edit": endpoint + "/edit",
        "recover": endpoint + "/recover", "rotate secret": endpoint + "/rotate-secret",
        "revoke endpoint": endpoint + "/delete", "deliveries": endpoint + "/deliveries", "delivery": delivery,
        "billing": "/billing", "disconnect": "/billing/disconnect", "pushes": "/billing/pushes",
    }


KEY_PAGES = {"keys", "key form", "rotate own key", "revoke own key"}
MAY_OPEN = {
    "admin": None,  # every page
    "user with access": KEY_PAGES | {"pushes"},
    "user without access": set(),
    "view only": set(),
}


def test_each_role_opens_only_the_pages_its_role_may_use(page, new_page, console, mailbox, browser_org,
                                                        receiver, admin_cli, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    ids = _ids(page, root, browser_org, receiver)
    ok(page.goto(root + "/team"))  # the user gets API-key access (signed out of the console by the change)
    user_row = page.get_by_role("row").filter(has_text=browser_org.user.email)
    if user_row.get_by_role("button", name="Grant access").count():
        with page.expect_navigation():
            user_row.get_by_role("button", name="Grant access").click()
    plain = browser_org.member("user", f"plain-{uuid.uuid4().hex[:8]}@browser-co.example")
    people = {"admin": browser_org.admin.email, "user with access": browser_org.user.email,
              "user without access": plain.email, "view only": browser_org.viewer.email}
    urls = every_url(ids)
    for role, email in people.items():
        person = page if role == "admin" else new_page()
        if role != "admin":
            sign_in(person, root, mailbox, email)
        for name, path in urls.items():
            allowed = MAY_OPEN[role]
            expected = 200 if allowed is None or name in allowed else 403
            answer = person.goto(root + path)
            assert answer is not None and answer.status == expected, (role, name, answer.status if answer else None)
            if expected == 403:
                assert shows_no_form(person), (role, name)
                assert "Ask an administrator" in person.get_by_role("main").inner_text(), (role, name)
        if role == "view only":
            ok(person.goto(root + "/api-keys/new"), 403)
            shot(person, "trust-08-key-form-view-only-403")
            forged = forge_post(person, root + "/api-keys/new", {"name": "mine", "role": "view only"})
            assert forged.status == 403 and shows_no_form(person)


def test_the_team_offers_grant_access_only_to_users_and_the_api_refuses_a_forged_grant(
        page, console, mailbox, browser_org, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    ok(page.goto(root + "/team"))
    viewer_row = page.get_by_role("row").filter(has_text=browser_org.viewer.email)
    assert viewer_row.get_by_role("button", name="Grant access").count() == 0
    shot(page, "trust-09-team-no-grant-for-view-only")
    forged = forge_post(page, f"{root}/team/{browser_org.viewer.user_id}/api-key-access", {"granted": "true"})
    assert forged.status == 409
    shot(page, "trust-10-forged-grant-refused")
    ok(page.goto(root + "/team"))
    assert "no" in page.get_by_role("row").filter(has_text=browser_org.viewer.email).get_by_role("cell").nth(2).inner_text()


# -- only real names, only the organization's ids ---------------------------------------------------------


@pytest.fixture(scope="module")
def foreign_ids(admin_cli: Any, webhooks_origin: str) -> dict[str, str]:
    """Ids of another organization: a key, a person, an endpoint and its delivery."""
    other = admin_cli.organization(f"Foreign Co {uuid.uuid4().hex[:6]}")
    http = requests.Session()
    http.trust_env = False
    headers = {"x-api-key": other.admin.key}
    endpoint = http.post(webhooks_origin + "/external/v1/webhook-configs", headers=headers, timeout=10,
                         json={"url": "https://127.0.0.1:9/foreign", "eventTypes": []}).json()
    http.post(f"{webhooks_origin}/external/v1/webhook-configs/{endpoint['id']}/test", headers=headers, timeout=10)
    deliveries = http.get(f"{webhooks_origin}/external/v1/webhook-configs/{endpoint['id']}/deliveries",
                          headers=headers, timeout=10).json()["deliveries"]
    return {"endpoint": endpoint["id"], "delivery": deliveries[0]["id"], "admin_key": other.admin.key_row_id,
            "user_key": other.user.key_row_id, "user": other.user.user_id}


def test_another_organizations_ids_and_made_up_ones_are_404_on_every_url_that_carries_one(
        page, console, mailbox, browser_org, foreign_ids, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    made_up = {name: str(uuid.uuid4()) for name in foreign_ids}
    for label, ids in (("another organization's", foreign_ids), ("made-up", made_up)):
        for name, path in every_url(ids).items():
            if not any(value in path for value in ids.values()):
                continue
            answer = page.goto(root + path)
            assert answer is not None and answer.status == 404, (label, name, answer.status if answer else None)
            assert shows_no_form(page), (label, name)
    shot(page, "trust-11-not-found")


def test_a_confirmation_names_the_item_as_its_service_has_it_never_from_the_address(
        page, console, mailbox, browser_org, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    issue_key(page, root, "prod-critical")
    ok(page.goto(root + "/api-keys"))
    href = page.get_by_role("link", name="Revoke prod-critical").get_attribute("href") or ""
    ok(page.goto(console_url(root, href) + "?name=old%20unused%20test%20key"))
    heading = page.get_by_role("heading", level=1).inner_text()
    assert "prod-critical" in heading and "old unused test key" not in page.content()
    shot(page, "trust-12-confirm-revoke-real-name")


# -- the sign-in mail from a queue ----------------------------------------------------------------------------


def test_the_sign_in_answer_does_not_wait_for_the_mail(page, console, mailbox, browser_org):
    """With the mail worker paused, asking for a link answers at once and sends nothing; the worker,
    resumed, sends it: the answer cannot tell a known email by waiting for its mail."""
    root, email = console.root, browser_org.viewer.email
    worker = console.mail_worker
    assert worker is not None
    with mailbox.lock:
        before = sum(1 for m in mailbox.messages if m["To"] == email)
    worker.send_signal(signal.SIGSTOP)
    try:
        ok(page.goto(root + "/sign-in"))
        page.get_by_label("Email address").fill(email)
        click_to(page, "Send me a sign-in link")
        assert page.get_by_role("heading", level=1).inner_text() == "Check your mail"
        with mailbox.lock:
            assert sum(1 for m in mailbox.messages if m["To"] == email) == before  # nothing sent in the request
    finally:
        worker.send_signal(signal.SIGCONT)
    assert len(mailbox.to(email)) == before + 1  # the worker sent it
    open_link(page, mailbox, email)
    click_to(page, "Sign in")
    assert page.url == root
