"""Accessibility: axe-core (``axe-playwright-python``, which ships axe.min.js: nothing is fetched) on
every page of the console, rendered by the console served for real (gunicorn over HTTPS, the real
services): 0 serious or critical violations. Every page kind: the forms with errors (sign-in, a key,
an endpoint), every confirmation page, the lists filtered by status, the event catalogue with a type
opened, and a view-only person's pages (their home, and the pages they may not use). The counts by
impact per page are written to
``.run/screenshots/console/axe.json`` and printed; every page is saved as a screenshot too.

axe is injected with Playwright's ``evaluate`` (the DevTools protocol), which the page's CSP
(``script-src 'self'``, no inline script) does not govern: no ``bypass_csp`` is needed.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from console_browser import click_to, ok, secret_shown, sign_in

pytestmark = pytest.mark.usefixtures("console")

BLOCKING = ("serious", "critical")


@pytest.fixture(scope="module")
def axe() -> Any:
    from axe_playwright_python.sync_playwright import Axe

    return Axe()


def test_every_page_has_no_serious_or_critical_axe_violation(page, new_page, axe, console, mailbox, browser_org,
                                                              receiver, shot):
    root = console.root
    results: dict[str, dict[str, Any]] = {}
    folder: list[Any] = []

    def check(name: str, on: Any = None) -> None:
        on = on or page
        found = axe.run(on).response["violations"]
        results[name] = {
            "url": on.url.replace(console.origin, ""),
            "by_impact": dict(Counter(v["impact"] for v in found)),
            "violations": [{"id": v["id"], "impact": v["impact"], "nodes": len(v["nodes"]), "help": v["help"]}
                           for v in found],
        }
        folder[:] = [shot(on, f"axe-{name}").parent]

    def visit(name: str, path: str, status: int = 200, on: Any = None) -> None:
        ok((on or page).goto(root + path), status)
        check(name, on)

    visit("sign-in", "/sign-in")
    # axe does run under the page's CSP: the sign-in field without its label is a critical violation
    page.evaluate('document.querySelector("label[for=email]").remove()')
    unlabelled = axe.run(page).response["violations"]
    assert ("label", "critical") in {(v["id"], v["impact"]) for v in unlabelled}, unlabelled
    ok(page.reload())
    page.get_by_label("Email address").fill("not an email")
    click_to(page, "Send me a sign-in link", status=400)
    check("sign-in-with-errors")
    page.get_by_label("Email address").fill(browser_org.admin.email)
    click_to(page, "Send me a sign-in link")
    check("sign-in-sent")
    ok(page.goto(mailbox.link_for(browser_org.admin.email)))
    check("sign-in-link")
    click_to(page, "Sign in")
    check("home")
    visit("keys", "/api-keys")
    visit("key-form", "/api-keys/new")
    page.get_by_label("Name").evaluate("field => field.removeAttribute('required')")  # the service's own check
    landed(page, "Issue the key")
    assert page.locator("[aria-invalid=true]").count() >= 1, page.content()[:2000]
    check("key-form-with-errors")
    page.get_by_label("Name").fill("Axe key")
    landed(page, "Issue the key")
    assert secret_shown(page).startswith("dps_")
    check("key-secret")
    visit("keys-with-a-key", "/api-keys")
    visit("keys-every-status", "/api-keys?status=all")
    row = page.get_by_role("row").filter(has=page.get_by_role("rowheader", name="Axe key", exact=True))
    rotate = row.get_by_role("link", name="Rotate Axe key").get_attribute("href")
    revoke = row.get_by_role("link", name="Revoke Axe key").get_attribute("href")
    visit("confirm-rotate-key", rotate.removeprefix("/console"))
    visit("confirm-revoke-key", revoke.removeprefix("/console"))

    visit("team", "/team")
    user_row = page.get_by_role("row").filter(has_text=browser_org.user.email)
    if user_row.get_by_role("button", name="Grant access").count():
        with page.expect_navigation():
            user_row.get_by_role("button", name="Grant access").click()
    withdraw = page.get_by_role("row").filter(has_text=browser_org.user.email).get_by_role("link").get_attribute("href")
    visit("confirm-withdraw-access", withdraw.removeprefix("/console"))

    visit("webhooks", "/webhooks")
    visit("event-catalogue", "/webhooks/event-types")
    with page.expect_navigation(url=re.compile("#type-")):
        page.get_by_role("navigation", name=re.compile("event types$")).get_by_role("link").first.click()
    check("event-catalogue-type-opened")
    visit("webhook-form", "/webhooks/new")
    page.get_by_label("URL").fill("https://10.1.2.3/hooks")  # a private address: refused by the dispatcher
    landed(page, "Add the endpoint")
    assert page.locator("#url-errors").is_visible(), page.content()[:2000]
    check("webhook-form-with-errors")
    page.get_by_label("URL").fill(receiver.url)
    page.get_by_role("checkbox").first.check()
    landed(page, "Add the endpoint")
    check("webhook-secret")
    detail = page.locator('main a[href^="/console/webhooks/"]').first.get_attribute("href")
    assert detail and detail.count("/") == 3, detail
    visit("webhook-detail", detail.removeprefix("/console"))
    click_to(page, "Send a test event")
    visit("webhook-edit-form", detail.removeprefix("/console") + "/edit")
    visit("confirm-rotate-signing-secret", detail.removeprefix("/console") + "/rotate-secret")
    visit("confirm-revoke-endpoint", detail.removeprefix("/console") + "/delete")
    deliveries = detail.removeprefix("/console") + "/deliveries"
    deadline = time.monotonic() + 15
    visit("deliveries", deliveries)
    while "SUCCESS" not in page.locator("main").inner_text() and time.monotonic() < deadline:
        time.sleep(0.2)
        ok(page.reload())
    check("deliveries")
    with page.expect_navigation():
        page.locator("tbody tr").first.get_by_role("link").click()
    check("delivery")
    visit("webhooks-with-an-endpoint", "/webhooks")
    visit("webhooks-every-status", "/webhooks?status=all")

    visit("billing", "/billing")
    visit("billing-pushes", "/billing/pushes")
    visit("confirm-billing-disconnect", "/billing/disconnect")
    visit("not-found", "/nowhere", 404)

    # a view-only person: their home, the pages they may not use (a page saying so, or a 403 page)
    viewer = new_page()
    sign_in(viewer, root, mailbox, browser_org.viewer.email)
    check("home-view-only", viewer)
    for name, path in (("keys-view-only", "/api-keys"), ("key-form-view-only", "/api-keys/new"),
                       ("team-refused-view-only", "/team"), ("webhooks-refused-view-only", "/webhooks")):
        answered = viewer.goto(root + path)
        assert answered is not None and answered.status in (200, 403), (path, answered and answered.status)
        check(name, viewer)

    report = _report(results)
    print("\n" + report)
    (folder[0] / "axe.json").write_text(json.dumps(results, indent=2) + "\n")
    blocking = {name: [v for v in r["violations"] if v["impact"] in BLOCKING] for name, r in results.items()}
    assert not any(blocking.values()), {k: v for k, v in blocking.items() if v}


def landed(page: Any, button: str) -> None:
    """Submits a form: its answer (or the page a POST redirects to), whatever the status."""
    with page.expect_navigation():
        page.get_by_role("button", name=button, exact=True).click()


def _report(results: dict[str, dict[str, Any]]) -> str:
    lines = [f"{'page':32} {'critical':>8} {'serious':>8} {'moderate':>8} {'minor':>6}  rules"]
    for name, r in results.items():
        count: Callable[[str], int] = lambda impact: r["by_impact"].get(impact, 0)  # noqa: E731
        rules = ", ".join(f"{v['id']}({v['impact']})" for v in r["violations"]) or "-"
        lines.append(f"{name:32} {count('critical'):>8} {count('serious'):>8} {count('moderate'):>8} {count('minor'):>6}  {rules}")
    return "\n".join(lines)
