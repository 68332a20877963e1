"""Pages a person reads without a manual (issue 25), in headless Chromium against the console served
by gunicorn over HTTPS with the real api, dispatcher (and its delivery worker) and connector (and its
push worker) behind it: least privilege preselected, destructive actions that look it and stand
apart, times to the second with the spec's FAILED and EXHAUSTED in words, "revoke" as the spec says
it with revoked items filtered out by default, refusals in a person's words, the event catalogue's
index with schema and example side by side, the secret page's callout and Copy beside the field,
buttons apart from their Cancel links, the pushes page's plurals and quote names, and a favicon.

Every page looked at is saved as a screenshot (``shot``, .run/screenshots/console/, ``read-*``)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
import requests
from console_browser import ok, secret_shown, sign_in

from dps_testing.provisioning import Admin, Member, Org

from console_helpers import served

pytestmark = pytest.mark.usefixtures("console")

WAIT_SECONDS = 20.0  # a worker's first attempt (or a push) on a loaded machine
DANGER = "rgb(163, 22, 26)"  # console.css --bad
SECOND = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$")
ISO_SECOND = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def submit(page, name: str, *, role: str = "button") -> None:
    """Clicks and lands on a page that is not an error (a POST's answer, or the page it redirects to)."""
    with page.expect_navigation() as landed:
        page.get_by_role(role, name=name, exact=True).click()
    response = landed.value
    assert response is not None and response.status < 400, (response and response.status, page.content()[:2000])


def eventually(probe: Callable[[], bool], what: str, page=None) -> None:
    """Reloads ``page`` (when given) until ``probe`` holds, for at most WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not probe():
        assert time.monotonic() < deadline, f"not within {WAIT_SECONDS} s: {what}"
        time.sleep(0.2)
        if page is not None:
            ok(page.reload())


def row(page, name: str):
    return page.get_by_role("row").filter(has=page.get_by_role("rowheader", name=name, exact=True))


def issue_key(page, root: str, name: str) -> str:
    ok(page.goto(root + "/api-keys/new"))
    page.get_by_label("Name").fill(name)
    submit(page, "Issue the key")
    return secret_shown(page)


def add_endpoint(page, root: str, url: str) -> str:
    """Adds an endpoint for ``url``; the address of its page."""
    ok(page.goto(root + "/webhooks/new"))
    page.get_by_label("URL").fill(url)
    submit(page, "Add the endpoint")
    ok(page.goto(root + "/webhooks?status=all"))
    href = page.get_by_role("link", name=url, exact=True).get_attribute("href")
    assert href
    return href.removeprefix("/console")


def axe_clean(page) -> None:
    """axe-core finds no serious or critical violation on the page as it is now (rows this file makes:
    a FAILED and an EXHAUSTED delivery, a push; the page kinds are in test_console_accessibility)."""
    from axe_playwright_python.sync_playwright import Axe

    found = [v for v in Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")]
    assert found == [], [(v["id"], v["impact"], v["help"]) for v in found]


def box(locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None
    return found


@pytest.fixture(scope="module")
def failing_receiver() -> Iterator[str]:
    """A receiver that answers 503 to every delivery: its deliveries fail and are retried."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
        return [b"busy"]

    with served(app) as origin:
        yield origin + "/failing"


def test_the_issue_form_preselects_the_lowest_role(page, console, mailbox, browser_org, shot):
    sign_in(page, console.root, mailbox, browser_org.admin.email)
    ok(page.goto(console.root + "/api-keys/new"))
    role = page.get_by_label("Role")
    assert role.locator("option").all_inner_texts() == ["admin", "user", "view only"]
    assert role.input_value() == "view only"  # least privilege first, not the admin's own role
    shot(page, "read-01-key-form-least-privilege")


def test_destructive_actions_look_destructive_and_stand_apart(page, console, mailbox, browser_org, receiver, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    issue_key(page, root, "Danger look")
    ok(page.goto(root + "/api-keys"))
    ordinary = page.get_by_role("navigation", name="Sections").get_by_role("link", name="Team", exact=True)
    ordinary_color = ordinary.evaluate("e => getComputedStyle(e).color")
    for action in ("Rotate", "Revoke"):
        link = row(page, "Danger look").get_by_role("link", name=f"{action} Danger look")
        style = link.evaluate("e => { const s = getComputedStyle(e); return [s.color, s.borderTopStyle, s.borderTopColor]; }")
        assert style == [DANGER, "solid", DANGER], (action, style)
        assert style[0] != ordinary_color
    rotate, revoke = (box(row(page, "Danger look").get_by_role("link", name=f"{a} Danger look")) for a in ("Rotate", "Revoke"))
    assert revoke["x"] - (rotate["x"] + rotate["width"]) >= 10  # apart from each other too
    shot(page, "read-02-keys-destructive")

    detail = add_endpoint(page, root, receiver.url + "/danger-look")
    ok(page.goto(root + detail))
    ordinary_actions = page.locator("ul.actions").first
    danger = page.get_by_role("region", name="Rotate or revoke")
    assert danger.is_visible()
    for name in ("Rotate the signing secret", "Revoke the endpoint"):
        assert ordinary_actions.get_by_role("link", name=name).count() == 0  # not among the ordinary actions
        link = danger.get_by_role("link", name=name, exact=True)
        assert link.evaluate("e => getComputedStyle(e).color") == DANGER
    assert danger.get_by_role("button").count() == 0  # no filled button beside them
    test_button = ordinary_actions.get_by_role("button", name="Send a test event")
    assert test_button.evaluate("e => getComputedStyle(e).color") != DANGER
    assert box(danger)["y"] >= box(ordinary_actions)["y"] + box(ordinary_actions)["height"]  # below, apart
    shot(page, "read-03-endpoint-destructive-apart")


def test_times_are_to_the_second_and_failed_and_exhausted_say_what_they_mean(
        page, console, mailbox, browser_org, failing_receiver, databases, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    detail = add_endpoint(page, root, failing_receiver + "/" + uuid.uuid4().hex[:8])
    ok(page.goto(root + detail))
    submit(page, "Send a test event")
    ok(page.goto(root + detail + "/deliveries"))
    first = page.locator("tbody tr").first
    eventually(lambda: first.count() == 1 and "FAILED" in first.inner_text(), "the test delivery FAILED", page)
    created = first.locator("time").first
    assert ISO_SECOND.match(created.get_attribute("datetime") or ""), created.get_attribute("datetime")
    assert SECOND.match(created.inner_text()), created.inner_text()
    assert re.search(r"\((\d+ s|\d+ min) ago\)|\(just now\)", first.inner_text()), first.inner_text()
    text = first.inner_text()
    assert "Failed, retries remain: 1 of 8 attempts made." in text, text
    assert re.search(r"The next attempt goes at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in \d+ (s|min)\)", text), text
    axe_clean(page)
    shot(page, "read-04-deliveries-failed")

    with page.expect_navigation():
        first.get_by_role("link").click()
    delivery_url = page.url.split("?")[0]  # without its view token (a page of buttons: issue 25)
    attempt = page.get_by_role("table", name="Every attempt, in order").locator("tbody tr").first
    assert attempt.get_by_role("rowheader").inner_text() == "1 of 8"
    assert SECOND.match(attempt.locator("time").inner_text()), attempt.inner_text()
    facts = page.locator("dl.facts").inner_text()
    assert "retries remain: 1 of 8 attempts made" in facts and "The next attempt goes at" in facts, facts
    shot(page, "read-05-delivery-failed")

    # the eighth failure, as the dispatcher records it (spec: "All 8 attempts failed"): its row given up
    delivery_id = delivery_url.rsplit("/", 1)[1]
    with psycopg.connect(databases["dispatcher"].replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as db:
        db.execute("UPDATE webhook_deliveries SET status = 'EXHAUSTED', attempt_count = 8, next_attempt_at = NULL, "
                   "completed_at = now() WHERE id = %s", (delivery_id,))
    ok(page.reload())
    facts = page.locator("dl.facts").inner_text()
    assert "EXHAUSTED" in facts and "Given up after 8 attempts" in facts and "never retried automatically" in facts, facts
    assert "retries remain" not in facts
    axe_clean(page)
    shot(page, "read-06-delivery-exhausted")
    ok(page.goto(root + detail + "/deliveries"))
    assert "Given up after 8 attempts" in page.locator("tbody tr").first.inner_text()
    shot(page, "read-07-deliveries-exhausted")
    _revoke_endpoint(page, root, detail)  # no more retries to the failing receiver


def _revoke_endpoint(page, root: str, detail: str) -> None:
    ok(page.goto(root + detail))
    with page.expect_navigation():
        page.get_by_role("link", name="Revoke the endpoint", exact=True).click()
    submit(page, "Revoke endpoint")


def test_an_endpoint_is_revoked_as_the_spec_says_and_revoked_items_are_filtered_out(
        page, console, mailbox, browser_org, receiver, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    url = receiver.url + "/revoked-" + uuid.uuid4().hex[:8]
    detail = add_endpoint(page, root, url)
    ok(page.goto(root + detail))
    with page.expect_navigation():
        page.get_by_role("link", name="Revoke the endpoint", exact=True).click()
    assert re.match(r"Revoke (this|the) webhook endpoint", page.get_by_role("heading", level=1).inner_text())
    assert "Delete" not in page.get_by_role("main").inner_text()
    shot(page, "read-08-confirm-revoke-endpoint")
    submit(page, "Revoke endpoint")
    assert "The endpoint is revoked." in page.get_by_role("status").first.inner_text()
    ok(page.goto(root + "/webhooks"))
    assert page.get_by_role("link", name=url, exact=True).count() == 0  # revoked: out of the default view
    assert re.search(r"\d+ revoked endpoints? left out", page.get_by_role("main").inner_text())
    shot(page, "read-09-webhooks-default-view")
    page.get_by_label("Show").select_option("revoked")
    submit(page, "Filter")
    assert "status=revoked" in page.url
    assert "REVOKED" in row(page, url).inner_text()
    shot(page, "read-10-webhooks-revoked")

    issue_key(page, root, "Filtered key")
    ok(page.goto(root + "/api-keys"))
    with page.expect_navigation():
        row(page, "Filtered key").get_by_role("link", name="Revoke Filtered key").click()
    submit(page, "Revoke")
    ok(page.goto(root + "/api-keys"))
    assert row(page, "Filtered key").count() == 0
    shot(page, "read-11-keys-default-view")
    page.get_by_label("Show").select_option("all")
    submit(page, "Filter")
    assert "revoked" in row(page, "Filtered key").inner_text()
    shot(page, "read-12-keys-all")


def test_a_refusal_says_what_the_person_cannot_do_and_whom_to_ask(page, console, mailbox, browser_org: Org, shot):
    someone: Member = browser_org.member("user", f"reader-{uuid.uuid4().hex[:6]}@browser-co.example")
    sign_in(page, console.root, mailbox, someone.email)
    response = page.goto(console.root + "/team")
    assert response is not None and response.status == 403
    main = page.get_by_role("main")
    said = main.evaluate("m => { const c = m.cloneNode(true); c.querySelectorAll('details').forEach(d => d.remove());"
                         " return c.innerText; }")
    assert "cannot" in said.lower() and "ask an administrator of browser co" in said.lower(), said
    for developer_words in ("missing_scope", "Code:", "refused:", "scope"):
        assert developer_words not in said, said
    shot(page, "read-13-refusal")


def test_the_event_catalogue_has_an_index_and_each_schema_beside_its_example(page, console, mailbox, browser_org, shot):
    sign_in(page, console.root, mailbox, browser_org.admin.email)
    page.set_viewport_size({"width": 1280, "height": 900})
    ok(page.goto(console.root + "/webhooks/event-types"))
    index = page.get_by_role("navigation", name=re.compile("event types$"))
    links = index.get_by_role("link")
    sections = page.locator("section.event-type")
    assert links.count() == sections.count() >= 2
    assert box(index)["y"] < box(sections.first)["y"]  # at the top
    target = links.nth(1).get_attribute("href")
    assert target and target.startswith("#")
    links.nth(1).click()
    assert page.url.endswith(target)
    chosen = page.locator(target)
    assert chosen.get_by_role("heading", level=2).inner_text() == links.nth(1).inner_text()
    schema, example = (chosen.locator(f".{part} pre") for part in ("schema", "example"))
    assert schema.is_visible() and example.is_visible()  # the index opens the type it leads to
    assert abs(box(schema)["y"] - box(example)["y"]) < 2 and box(example)["x"] > box(schema)["x"] + box(schema)["width"]
    height = page.evaluate("document.documentElement.scrollHeight")
    print(f"event catalogue: {sections.count()} types, {height} px high at 1280 px wide")
    shot(page, "read-14-event-catalogue-wide")
    page.set_viewport_size({"width": 420, "height": 900})
    assert box(example)["y"] >= box(schema)["y"] + box(schema)["height"]  # stacked on a narrow screen
    shot(page, "read-15-event-catalogue-narrow")


def test_the_secret_page_has_copy_beside_the_field_and_a_shown_once_callout_and_buttons_keep_apart(
        page, console, mailbox, browser_org, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    ok(page.goto(root + "/api-keys/new"))
    issue, cancel = page.get_by_role("button", name="Issue the key"), page.get_by_role("link", name="Cancel")
    assert box(cancel)["x"] - (box(issue)["x"] + box(issue)["width"]) >= 12
    page.get_by_label("Name").fill("Callout key")
    submit(page, "Issue the key")
    field, copy = page.locator("#secret"), page.get_by_role("button", name="Copy", exact=True)
    assert copy.is_visible()
    f, c = box(field), box(copy)
    assert c["x"] >= f["x"] + f["width"] and c["y"] < f["y"] + f["height"] and c["y"] + c["height"] > f["y"]  # beside
    note = page.get_by_role("note")
    assert note.count() == 1
    assert "shown once" in note.get_by_role("heading").inner_text()
    shot(page, "read-16-secret-callout")

    ok(page.goto(root + "/api-keys"))
    with page.expect_navigation():
        row(page, "Callout key").get_by_role("link", name="Revoke Callout key").click()
    confirm, cancel = page.get_by_role("button", name="Revoke", exact=True), page.get_by_role("link", name="Cancel")
    assert box(cancel)["x"] - (box(confirm)["x"] + box(confirm)["width"]) >= 12
    shot(page, "read-17-confirm-spacing")


def _api(api_origin: str, ca: str, member: Member, method: str, path: str, body: Any = None) -> Any:
    resp = requests.request(method, api_origin + "/external/v1" + path, json=body, headers=member.headers,
                            verify=ca, timeout=30)
    assert resp.status_code < 300, (method, path, resp.status_code, resp.text)
    return resp.json() if resp.content else None


def test_the_pushes_page_counts_in_plain_words_and_names_the_quote(
        page, console, mailbox, admin_cli: Admin, api_origin, billing_origin, tls_files, shot):
    org = admin_cli.organization(f"Pushes {uuid.uuid4().hex[:6]}")
    root, ca = console.root, tls_files["ca"]
    sign_in(page, root, mailbox, org.admin.email)
    ok(page.goto(root + "/billing"))
    submit(page, "Connect")
    submit(page, "Continue to the billing platform", role="link")
    submit(page, "Install")
    assert page.url.startswith(root + "/billing?billing=connected&view=")  # the page of Connect: a view (issue 25)
    disconnect = page.get_by_role("region", name="Disconnect").get_by_role("link", name="Disconnect", exact=True)
    assert disconnect.evaluate("e => getComputedStyle(e).color") == DANGER
    shot(page, "read-18-billing-connected")

    product = _api(api_origin, ca, org.admin, "POST", "/products", {
        "specId": "SPEC-" + uuid.uuid4().hex[:8], "name": "Console seat", "priceModel": "PER_UNIT",
        "priceFrequency": "MONTHLY", "listPrices": {"USD": "100.00"}})
    quote = _api(api_origin, ca, org.admin, "POST", "/pricing-quotes", {
        "name": "Initech renewal", "currency": "USD", "billingFrequency": "MONTHLY", "subscriptionTermMonths": 12,
        "lines": [{"productId": product["id"], "quantity": "1"}]})
    _api(api_origin, ca, org.admin, "POST", f"/pricing-quotes/{quote['id']}/approval")
    pushed = requests.post(f"{billing_origin}/external/v1/pricing-quotes/{quote['id']}/billing-pushes",
                           headers=org.admin.headers, timeout=30)
    assert pushed.status_code == 202, pushed.text

    ok(page.goto(root + "/billing/pushes"))
    eventually(lambda: "succeeded" in page.get_by_role("table").inner_text(), "the push succeeded", page)
    push = page.locator("tbody tr").first
    assert push.get_by_role("rowheader").inner_text() == "Initech renewal"
    assert quote["id"] not in push.inner_text()
    assert "1 product, 1 price for 1 line" in push.inner_text(), push.inner_text()
    axe_clean(page)
    shot(page, "read-19-pushes")


def test_the_console_serves_its_icon_and_no_page_load_asks_for_a_missing_one(page, console, shot):
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    ok(page.goto(console.root + "/sign-in"))
    icon = page.locator('link[rel="icon"]').get_attribute("href")
    assert icon
    page.wait_for_load_state("networkidle")
    assert missing == []
    for path in (icon, "/console/favicon.ico"):
        answer = page.request.get(console.origin + path)
        assert answer.status == 200 and answer.headers["content-type"].startswith("image/svg+xml"), (path, answer.status)
    shot(page, "read-20-sign-in-with-icon")
