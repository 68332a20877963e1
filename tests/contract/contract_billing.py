"""What the billing contract tests use: the connector's HTTPS API, the billing platform stand-in
(its marketplace page driven by plain HTTP as a browser would, and its recordings of every request),
approved quotes made through the api, and pushes waited for with a deadline."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests

from dps_common.openapi.components import inline_refs
from dps_testing.provisioning import Member, Org

from dps_billing_stand_in import BillingStandIn

import contract_data as data
from contract_client import ISSUED, Api
from contract_webhooks import wait_for

SECRET_KEY = "sk_test_contract_billing_app"
CLIENT_ID = "ca_contract_billing_app"
WEBHOOK_SECRET = "whsec_contract_billing_0123456789abcdef"
CALLBACK_PATH = "/external/v1/billing-connection/callback"
PLATFORM_WEBHOOKS_PATH = "/external/v1/billing-platform/webhooks"
PUSH_DEADLINE_SECONDS = 60.0
FINISHED = ("succeeded", "failed")
_OUTCOME = re.compile(r'data-outcome="([a-z_]+)"')


class _InstallForm(HTMLParser):
    """The install page's form: its action and its inputs (the hidden ones carry the request)."""

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


@dataclass
class Landed:
    """The connector's callback page the browser landed on."""

    response: requests.Response

    @property
    def outcome(self) -> str:
        found = _OUTCOME.search(self.response.text)
        assert found, self.response.text[:2000]
        return found.group(1)


class DocumentedApi(Api):
    """The connector's API that lets a test request only operations its OpenAPI document lists: a
    request to anything else fails the test (``absolute=True`` is for the deliberately wrong paths
    of the versioning tests)."""

    def __init__(self, origin: str, ca_file: str):
        super().__init__(origin, ca_file)
        self.operations: dict[tuple[str, str], dict] = {}
        self.document = inline_refs(self.ok("GET", "/openapi.json", None, status=200))
        self.operations = {
            (method.upper(), path): op
            for path, item in self.document["paths"].items()
            for method, op in item.items()
            if isinstance(op, dict)
        }

    def call(self, method: str, path: str, key: Any = None, *, absolute: bool = False, **kwargs: Any) -> requests.Response:
        if not absolute and path != "/openapi.json":
            self.operation(method, path)
        return super().call(method, path, key, absolute=absolute, **kwargs)

    def operation(self, method: str, path: str) -> tuple[str, str]:
        """The documented (method, path template) a concrete request is an instance of."""
        concrete = path.split("?")[0].strip("/").split("/")
        for doc_method, doc_path in self.operations:
            parts = doc_path.strip("/").split("/")
            if doc_method == method.upper() and len(parts) == len(concrete) and all(
                p == c or p.startswith("{") for p, c in zip(parts, concrete)
            ):
                return doc_method, doc_path
        raise AssertionError(f"{method} {path} is not an operation of the connector's OpenAPI document")


class Billing:
    """The running billing stack: the connector (``connector``), the api (``api``), the stand-in."""

    def __init__(self, connector: DocumentedApi, api: Api, stand_in: BillingStandIn, ca_file: str):
        self.connector = connector
        self.api = api
        self.stand_in = stand_in
        self.ca_file = ca_file
        self._processes: list[subprocess.Popen] = []

    def watch(self, *processes: subprocess.Popen) -> None:
        self._processes.extend(processes)

    def check_processes(self) -> None:
        for process in self._processes:
            if process.poll() is not None:
                pytest.fail(f"{' '.join(map(str, process.args))} exited with {process.returncode}", pytrace=False)

    # --- the connection ---

    def authorize(self, admin: Member) -> dict:
        return self.connector.ok("POST", "/billing-connection/authorize", admin, status=200)

    def browser(self) -> requests.Session:
        """A fresh browser: no cookies, the suite's CA for the connector's HTTPS callback."""
        session = ISSUED.watch(requests.Session())
        session.trust_env = False
        session.verify = self.ca_file
        return session

    def start(self, admin: Member) -> tuple[requests.Session, str]:
        """A browser that opened a fresh start URL (the connector's cookie set) and the platform's
        authorize URL it was redirected to (not followed)."""
        browser = self.browser()
        started = browser.get(self.authorize(admin)["startUrl"], allow_redirects=False, timeout=30)
        assert started.status_code == 303, started.text[:2000]
        return browser, started.headers["Location"]

    def install(self, authorize_url: str, decision: str = "install", account: str = "",
                browser: requests.Session | None = None) -> Landed:
        """What the admin's browser does: open the start URL (the connector sets its cookie and sends it
        on to the install page; or the install page itself, with ``browser`` from ``start``), press
        Install (or Cancel), follow the platform's redirect to the connector's callback page."""
        browser = browser or self.browser()
        page = browser.get(authorize_url, timeout=30)
        assert page.status_code == 200, page.text[:2000]
        form = _InstallForm()
        form.feed(page.text)
        assert form.action is not None, page.text[:2000]
        fields = {**form.fields, "decision": decision, "account": account}
        landed = browser.post(urljoin(page.url, form.action), data=fields, timeout=30)
        assert landed.url.startswith(self.connector.origin + CALLBACK_PATH), landed.url
        return Landed(landed)

    def connect(self, org: Org, account: str = "") -> dict:
        """Connect ``org`` through the marketplace (its admin presses Install); the connection record."""
        landed = self.install(self.authorize(org.admin)["startUrl"], account=account)
        assert (landed.response.status_code, landed.outcome) == (200, "connected"), landed.response.text[:2000]
        return self.connection(org)

    def connection(self, org: Org) -> dict:
        return self.connector.ok("GET", "/billing-connection", org.admin, status=200)

    def disconnect(self, org: Org) -> None:
        self.connector.ok("DELETE", "/billing-connection", org.admin, status=204)

    def wait_disconnected(self, org: Org) -> None:
        wait_for(lambda: self.connector.get("/billing-connection", org.admin).status_code == 404,
                 f"the billing connection of {org.name} removed")

    # --- quotes ---

    def product(self, org: Org, **fields: Any) -> dict:
        return data.product(self.api, org.admin, **fields)

    def approved_quote(self, org: Org, owner: Member, lines: list[dict], **fields: Any) -> dict:
        """A quote made by ``owner`` and submitted; with no approval rule in ``org`` it is approved at once."""
        quote = data.quote(self.api, owner, lines=lines, **fields)
        self.api.ok("POST", f"/pricing-quotes/{quote['id']}/approval", owner, status=201)
        approved = self.api.ok("GET", f"/pricing-quotes/{quote['id']}", owner)
        assert approved["status"] == "APPROVED", approved
        return approved

    def simple_quote(self, org: Org, owner: Member | None = None, **fields: Any) -> dict:
        """An approved one-line USD quote of ``org`` (owned by its user unless ``owner`` is given)."""
        product = self.product(org)
        return self.approved_quote(org, owner or org.user, [data.line(product["id"])], **fields)

    # --- pushes ---

    def pushes_path(self, quote_id: str) -> str:
        return f"/pricing-quotes/{quote_id}/billing-pushes"

    def push(self, member: Member, quote_id: str) -> requests.Response:
        return self.connector.post(self.pushes_path(quote_id), member)

    def read_push(self, member: Member, quote_id: str, push_id: str) -> dict:
        return self.connector.ok("GET", f"{self.pushes_path(quote_id)}/{push_id}", member, status=200)

    def wait_push(self, member: Member, quote_id: str, push_id: str,
                  statuses: tuple[str, ...] = FINISHED) -> dict:
        def probe() -> dict | None:
            self.check_processes()
            record = self.read_push(member, quote_id, push_id)
            return record if record["status"] in statuses else None

        return wait_for(probe, f"billing push {push_id} {' or '.join(statuses)}", PUSH_DEADLINE_SECONDS)

    def pushed(self, member: Member, quote_id: str) -> dict:
        """Push the quote and wait for the push to finish; its final record."""
        resp = self.push(member, quote_id)
        assert resp.status_code == 202, resp.text[:2000]
        return self.wait_push(member, quote_id, resp.json()["id"])

    # --- what the platform received ---

    def creates(self, path: str, account: str) -> list[Any]:
        """The platform's recordings of the account's successful creates on ``path``, oldest first."""
        return [r for r in self.stand_in.requests(path=path, method="POST")
                if r.account == account and r.status == 200 and not r.replayed]


def state_of(authorize_url: str) -> str:
    return parse_qs(urlsplit(authorize_url).query)["state"][0]
