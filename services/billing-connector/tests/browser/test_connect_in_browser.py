"""The connect flow in a real browser (headless Chromium driven by Playwright): the admin opens the
start URL (the connector's cookie binds the flow to the browser, then the stand-in's page), presses
Install (or Cancel), and reads the connector's callback page. A reused or expired ``state``, or one
completed in another browser, is refused with a page that says why.

The browser is the test plugin's (``chromium`` and ``page``, ``dps_testing.browser``): the
system's Chromium, never one Playwright downloads; without it the module skips, except under
``CI=true`` where that is a failure.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import requests

from dps_testing.fake_api import FakeApi

from dps_billing.composition import build_http

if TYPE_CHECKING:
    from playwright.sync_api import Page, Response

CALLBACK = "/external/v1/billing-connection/callback"
CONNECTED = "Billing platform connected"
NOT_CONNECTED = "Billing platform not connected"
TAB_SUFFIX = " · Deal Pricing Service"  # the browser tab names the product, not just the outcome
ACCOUNT = re.compile(r"acct_[A-Za-z0-9]+")


def authorize(served: str, key: str) -> dict[str, Any]:
    resp = requests.post(f"{served}/external/v1/billing-connection/authorize", headers={"x-api-key": key}, timeout=5)
    assert resp.status_code == 200, resp.text
    return resp.json()


def connection(served: str, key: str) -> requests.Response:
    return requests.get(f"{served}/external/v1/billing-connection", headers={"x-api-key": key}, timeout=5)


def press(page: Page, button: str) -> Response:
    """Presses Install or Cancel on the install page; answers the callback page's response."""
    with page.expect_response(lambda r: CALLBACK in r.url) as landed:
        page.get_by_role("button", name=button, exact=True).click()
    page.wait_for_load_state()
    return landed.value


def outcome(page: Page) -> str:
    return page.locator("#outcome").get_attribute("data-outcome") or ""


def open_install_page(page: Page, link: str) -> None:
    resp = page.goto(link)
    assert resp is not None and resp.status == 200
    assert page.title().startswith("Install ")


def connect(page: Page, served: str, key: str) -> str:
    """The whole flow; answers the account id the page shows."""
    open_install_page(page, authorize(served, key)["startUrl"])
    landed = press(page, "Install")
    assert landed.status == 200
    assert outcome(page) == "connected"
    found = ACCOUNT.search(page.locator("#outcome").inner_text())
    assert found, page.content()
    return found.group(0)


def test_install_lands_on_the_connected_page(served, fake_api: FakeApi, stand_in, settings, page, tmp_path: Path):
    org = fake_api.organization()
    account = connect(page, served, org.admin.key)
    assert page.url.startswith(f"{served}{CALLBACK}?")
    assert page.title() == CONNECTED + TAB_SUFFIX
    assert page.get_by_role("heading", level=1).inner_text() == CONNECTED
    assert "connected" in page.locator("#outcome").inner_text().lower()
    assert page.get_by_role("link").get_attribute("href") == settings.return_url
    assert account in stand_in.installed_accounts()
    page.screenshot(path=str(tmp_path / "connected.png"), full_page=True)

    body = connection(served, org.admin.key).json()
    assert body["status"] == "connected"
    assert body["accountId"] == account
    assert body["connectedBy"] == str(org.admin.user_id)


def test_cancel_lands_on_the_denial(served, fake_api: FakeApi, page, tmp_path: Path):
    org = fake_api.organization()
    open_install_page(page, authorize(served, org.admin.key)["startUrl"])
    page.screenshot(path=str(tmp_path / "install.png"), full_page=True)
    landed = press(page, "Cancel")
    assert landed.status == 200
    assert outcome(page) == "denied"
    assert page.title() == NOT_CONNECTED + TAB_SUFFIX
    assert "denied or cancelled" in page.locator("#outcome").inner_text()
    assert connection(served, org.admin.key).status_code == 404


def test_a_state_completed_in_another_browser_is_refused(served, fake_api: FakeApi, stand_in, chromium, page):
    """Organization A's admin starts connecting; the callback with A's state, opened in another browser
    (an attacker's, with a code of their own install), is refused and connects nothing."""
    org = fake_api.organization()
    open_install_page(page, authorize(served, org.admin.key)["startUrl"])
    state = page.locator("input[name=state]").get_attribute("value")
    assert state
    other = chromium.new_context()
    try:
        elsewhere = other.new_page()
        resp = elsewhere.goto(f"{served}{CALLBACK}?code={stand_in.install()}&state={state}")
        assert resp is not None and resp.status == 400
        assert outcome(elsewhere) == "not_this_browser"
        assert "another browser" in elsewhere.locator("#outcome").inner_text()
    finally:
        other.close()
    assert connection(served, org.admin.key).status_code == 404
    landed = press(page, "Install")  # the admin's own browser still completes the flow
    assert landed.status == 200 and outcome(page) == "connected"


def _back_and_install_again(page: Page) -> Response | None:
    page.go_back()
    assert page.title().startswith("Install ")
    return press(page, "Install")


def _reload(page: Page) -> Response | None:
    return page.reload()


def _replay_in_a_new_page(page: Page) -> Response | None:
    other = page.context.new_page()
    resp = other.goto(page.url)
    page.close()
    return resp


@pytest.mark.parametrize("reuse", [_back_and_install_again, _reload, _replay_in_a_new_page],
                         ids=["back-and-install-again", "reload", "replay-in-a-new-page"])
def test_a_used_state_is_refused_with_a_reason(served, fake_api: FakeApi, page, reuse):
    org = fake_api.organization()
    account = connect(page, served, org.admin.key)
    resp = reuse(page)
    shown = page.context.pages[-1]
    assert resp is not None and resp.status == 400
    assert outcome(shown) == "state_used"
    assert shown.title() == NOT_CONNECTED + TAB_SUFFIX
    assert "already used" in shown.locator("#outcome").inner_text()
    # the first connection stands, whatever the second install did on the platform
    assert connection(served, org.admin.key).json()["accountId"] == account


@pytest.fixture
def short_lived_states(served, served_socket, make_settings, committed_tx) -> Iterator[None]:
    """The served connector with authorize links good for one second (the least its settings allow)."""
    _, late = served_socket
    regular = late.app
    late.app = build_http(make_settings(BILLING_STATE_TTL_SECONDS="1"), tx=committed_tx)
    yield
    late.app = regular


def test_an_expired_state_is_refused_with_a_reason(served, fake_api: FakeApi, short_lived_states, page):
    org = fake_api.organization()
    link = authorize(served, org.admin.key)
    open_install_page(page, link["startUrl"])
    # the admin leaves the install page open past the link's expiry (the signed expiry is never later)
    expires_at = datetime.fromisoformat(link["expiresAt"].replace("Z", "+00:00"))
    time.sleep(max(0.0, (expires_at - datetime.now(UTC)).total_seconds()) + 0.2)
    landed = press(page, "Install")
    assert landed.status == 400
    assert outcome(page) == "state_expired"
    assert page.title() == NOT_CONNECTED + TAB_SUFFIX
    assert "expired" in page.locator("#outcome").inner_text()
    assert connection(served, org.admin.key).status_code == 404
