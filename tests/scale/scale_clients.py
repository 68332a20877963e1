"""What the two-of-everything scenario does as its users do, over plain HTTP: a person signing in to the
console (the link the console mailed, read from make run's mailbox) and revoking a key with the console's
form; an admin connecting the billing platform (the stand-in's install page) and pushing approved
quotes; an integration's keyed POSTs."""

from __future__ import annotations

import re
import time
import uuid
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

import requests
from scale_replicas import plain, until_ok
from scale_stack import wait_for

from dps_testing.provisioning import Member

EXTERNAL = "/external/v1"
CSRF = re.compile(r'name="csrf" value="([^"]*)"')
ONCE = re.compile(r'name="once" value="([^"]*)"')
OUTCOME = re.compile(r'data-outcome="([a-z_]+)"')


class Console:
    """A browser on the console: its cookies, each form's CSRF and one-time tokens sent back."""

    def __init__(self, public_origin: str, mailbox: str):
        self.public = public_origin
        self.mailbox = mailbox
        self.browser = plain()

    def post(self, origin: str, path: str, form_page: str, **fields: str) -> requests.Response:
        """A form of ``form_page`` posted to ``origin`` (the one address or a replica's own)."""
        page = self.browser.get(origin + form_page, timeout=30)
        assert page.status_code == 200, (form_page, page.status_code)
        found = {"csrf": CSRF.search(page.text), "once": ONCE.search(page.text)}
        tokens = {name: match.group(1) for name, match in found.items() if match}
        return self.browser.post(origin + path, data={**tokens, **fields}, allow_redirects=False, timeout=30,
                                 headers={"Origin": self.public})

    def sign_in(self, origin: str, email: str) -> None:
        seen = {mail["id"] for mail in self._mails(email)}
        sent = self.post(origin, "/console/sign-in", "/console/sign-in", email=email)
        assert sent.status_code == 303, sent.text[:500]

        def link() -> str | None:
            for mail in self._mails(email):
                found = [url for url in mail["links"] if "/sign-in/link?token=" in url]
                if mail["id"] not in seen and found:
                    return str(found[0])
            return None

        url = wait_for(link, f"the sign-in mail to {email}", timeout=60, every=0.3)
        token = url.split("token=", 1)[1]
        path = url.removeprefix(self.public)
        signed_in = self.post(origin, "/console/sign-in/link", path, token=token)
        assert signed_in.status_code == 303 and signed_in.headers["location"].endswith("/console"), signed_in.text[:500]

    def keys_page(self, origin: str) -> requests.Response:
        return self.browser.get(origin + "/console/api-keys", allow_redirects=False, timeout=30)

    def revoke(self, origin: str, key_row_id: str) -> None:
        path = f"/console/api-keys/{key_row_id}/revoke"
        revoked = self.post(origin, path, path)
        assert revoked.status_code == 303, (revoked.status_code, revoked.text[:500])

    def _mails(self, email: str) -> list[dict[str, Any]]:
        answer = plain().get(self.mailbox + "/messages.json", params={"to": email}, timeout=10)
        answer.raise_for_status()
        messages: list[dict[str, Any]] = answer.json()["messages"]
        return messages


class Api:
    """Keyed calls to an origin (the one address or a replica), honouring 429."""

    def __init__(self, origin: str):
        self.origin = origin
        self.session = plain()

    def call(self, method: str, path: str, member: Member, *, key: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {**member.headers, **({"Idempotency-Key": key} if key else {})}
        return until_ok(lambda: self.session.request(method, self.origin + EXTERNAL + path, headers=headers,
                                                     timeout=60, **kwargs))

    def ok(self, method: str, path: str, member: Member, status: int = 200, **kwargs: Any) -> dict[str, Any]:
        answer = self.call(method, path, member, **kwargs)
        assert answer.status_code == status, (method, path, answer.status_code, answer.text[:500])
        body: dict[str, Any] = answer.json()
        return body


class _Form(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = named.get("action") or ""
        elif tag == "input" and named.get("name"):
            self.fields[named["name"] or ""] = named.get("value") or ""


def connect_billing(api: Api, admin: Member) -> None:
    """The admin connects the billing platform: the connector's start URL, the stand-in's Install."""
    start = api.ok("POST", "/billing-connection/authorize", admin)["startUrl"]
    browser = plain()
    page = browser.get(start, timeout=30)
    assert page.status_code == 200, page.text[:1000]
    form = _Form()
    form.feed(page.text)
    assert form.action is not None, page.text[:1000]
    landed = browser.post(urljoin(page.url, form.action), data={**form.fields, "decision": "install"}, timeout=30)
    found = OUTCOME.search(landed.text)
    assert landed.status_code == 200 and found and found.group(1) == "connected", landed.text[:1000]


def approved_quote(api: Api, admin: Member, owner: Member) -> str:
    """A one-line quote, submitted: with no approval rule it is approved at once."""
    product = api.ok("POST", "/products", admin, 201, json={
        "specId": f"SPEC-{uuid.uuid4().hex[:8]}", "name": f"Product {uuid.uuid4().hex[:6]}", "priceModel": "PER_UNIT",
        "priceFrequency": "MONTHLY", "listPrices": {"USD": "100.00"}})
    quote = api.ok("POST", "/pricing-quotes", owner, 201, json={
        "name": f"Quote {uuid.uuid4().hex[:6]}", "currency": "USD", "billingFrequency": "MONTHLY",
        "subscriptionTermMonths": 12, "lines": [{"productId": product["id"], "quantity": "1"}]})
    api.ok("POST", f"/pricing-quotes/{quote['id']}/approval", owner, 201)
    return str(quote["id"])


def wait_pushed(api: Api, admin: Member, pushes: dict[str, str], seconds: float = 120) -> dict[str, str]:
    """Each push (quote id -> push id) to its end: quote id -> status."""
    deadline = time.monotonic() + seconds
    statuses: dict[str, str] = {}
    while len(statuses) < len(pushes) and time.monotonic() < deadline:
        for quote_id, push_id in pushes.items():
            if quote_id not in statuses:
                push = api.ok("GET", f"/pricing-quotes/{quote_id}/billing-pushes/{push_id}", admin)
                if push["status"] in ("succeeded", "failed"):
                    statuses[quote_id] = push["status"]
        time.sleep(1)
    return statuses
