"""What a person does in the console, step by step in a real browser (Playwright's sync API)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from console_helpers import Mailbox

if TYPE_CHECKING:
    from playwright.sync_api import Page, Response


def ok(response: Response | None, status: int = 200) -> Response:
    assert response is not None, "no response"
    if response.status != status:
        raise AssertionError(f"{response.request.method} {response.url}: {response.status}, not {status}\n"
                             f"{response.request.all_headers()}\n{response.text()[:2000]}")
    return response


def click_to(page: Page, name: str, *, role: str = "button", status: int = 200) -> Response:
    """Clicks the button (or link) and answers the last response of the navigation (after redirects)."""
    with page.expect_navigation() as landed:
        page.get_by_role(role, name=name, exact=True).click()  # type: ignore[arg-type]
    return ok(landed.value, status)


def ask_for_link(page: Page, root: str, email: str) -> None:
    ok(page.goto(root + "/sign-in"))
    page.get_by_label("Email address").fill(email)
    click_to(page, "Send me a sign-in link")
    assert page.get_by_role("heading", level=1).inner_text() == "Check your mail"


def open_link(page: Page, mailbox: Mailbox, email: str) -> None:
    """Opens the sign-in link of the latest mail to ``email``: the page with the Sign in button."""
    ok(page.goto(mailbox.link_for(email)))
    assert page.get_by_role("button", name="Sign in", exact=True).is_visible()


def sign_in(page: Page, root: str, mailbox: Mailbox, email: str) -> None:
    """The whole flow: the form, the mail's link, Sign in; lands on the console's home."""
    ask_for_link(page, root, email)
    open_link(page, mailbox, email)
    click_to(page, "Sign in")
    assert page.url == root, page.url


def secret_shown(page: Page) -> str:
    value = page.locator("#secret").input_value()
    assert value, page.content()
    return value


def csrf_of(page: Page) -> str:
    token = page.locator('input[name="csrf"]').first.get_attribute("value")
    assert token
    return token


def forge_post(page: Page, action: str, fields: dict[str, str]) -> Response:
    """A POST the page does not offer, sent by this browser as a form of the page would be (same
    origin, the session's cookie, a valid CSRF token and a fresh one-time token): what a person
    editing the page can do."""
    fields = {"once": secrets.token_urlsafe(32), **fields, "csrf": csrf_of(page)}
    with page.expect_navigation() as landed:
        page.evaluate(
            """([action, fields]) => {
                const form = document.createElement("form");
                form.method = "post";
                form.action = action;
                for (const [name, value] of Object.entries(fields)) {
                    const input = document.createElement("input");
                    input.type = "hidden"; input.name = name; input.value = value;
                    form.appendChild(input);
                }
                document.body.appendChild(form);
                form.submit();
            }""",
            [action, fields],
        )
    response = landed.value
    assert response is not None
    return response
