"""Helpers of the connector's tests: the admin's browser on the stand-in's install page, signed
platform events, and quote snapshots."""

from __future__ import annotations

import html
import json
import re
import time
from dataclasses import replace
from datetime import date
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit
from uuid import UUID, uuid4

import requests
import stripe
from sqlalchemy import text

from dps_testing.events import assert_documented_event

from dps_billing.domain.quote_snapshot import (
    BillingFrequency,
    PriceFrequency,
    PriceModel,
    QuoteSnapshot,
    QuoteSnapshotLine,
    QuoteStatus,
)
from dps_billing.schemas.events import EVENTS

CONSOLE_URL = "https://console.example/console"  # the connector's CONSOLE_URL in these tests
WEBHOOK_SECRET = "whsec_billing_connector_tests_0123456789"
_HIDDEN = re.compile(r'<input type=hidden name=(\w+) value="([^"]*)">')
_FORM = re.compile(r'<form method=post action="([^"]*)">')


def browser_install(start_url: str, decision: str = "install", account: str = "",
                    browser: requests.Session | None = None) -> requests.Response:
    """What the admin's browser does: open the start URL (the connector sets its cookie and redirects to
    the install page), press Install (or Cancel), follow the platform's redirect to the callback."""
    with requests.Session() if browser is None else _kept(browser) as session:
        page = session.get(start_url, timeout=10)
        assert page.status_code == 200, page.text
        action = html.unescape(_FORM.search(page.text).group(1))  # type: ignore[union-attr]
        form = {name: html.unescape(value) for name, value in _HIDDEN.findall(page.text)}
        form |= {"decision": decision, "account": account}
        parts = urlsplit(page.url)
        return session.post(f"{parts.scheme}://{parts.netloc}{action}", data=form, timeout=10)


class _kept:
    """A caller's session, left open."""

    def __init__(self, session: requests.Session):
        self._session = session

    def __enter__(self) -> requests.Session:
        return self._session

    def __exit__(self, *exc: object) -> None:
        return None


def start_flow(served: str, admin_key: str, **body: str) -> tuple[requests.Session, str]:
    """A browser that opened a fresh start URL (holding the connector's cookie) and the state of the
    platform URL it was sent to, not followed."""
    link = requests.post(f"{served}/external/v1/billing-connection/authorize", headers={"x-api-key": admin_key},
                         json=body or None, timeout=10)
    assert link.status_code == 200, link.text
    browser = requests.Session()
    started = browser.get(link.json()["startUrl"], allow_redirects=False, timeout=10)
    assert started.status_code == 303, started.text
    return browser, parse_qs(urlsplit(started.headers["Location"]).query)["state"][0]


def outcome_of(page: requests.Response) -> str:
    found = re.search(r'data-outcome="([a-z_]+)"', page.text)
    assert found, page.text
    return found.group(1)


def signed_event(secret: str, event_type: str, account: str, *, event_id: str | None = None,
                 timestamp: int | None = None, livemode: bool = False) -> tuple[bytes, str]:
    body = json.dumps({
        "id": event_id or f"evt_{uuid4().hex[:24]}",
        "object": "event",
        "type": event_type,
        "account": account,
        "livemode": livemode,
        "created": int(time.time()),
        "data": {"object": {"id": "ca_billing_connector_tests", "object": "application"}},
    }).encode()
    stamp = timestamp if timestamp is not None else int(time.time())
    return body, stripe.WebhookSignature.generate_signature_header(body.decode(), secret, stamp)


def line(position: int = 1, *, model: PriceModel = PriceModel.PER_UNIT,
         frequency: PriceFrequency = PriceFrequency.MONTHLY, quantity: str = "1", unit_amount: str = "100.00",
         custom_name: str | None = None, short_name: str | None = None, name: str = "Product",
         spec_id: str = "SPEC-1") -> QuoteSnapshotLine:
    one_time = model is PriceModel.ONE_TIME_FEE or frequency is PriceFrequency.ONE_TIME
    return QuoteSnapshotLine(
        id=uuid4(), position=position, product_id=uuid4(), product_spec_id=spec_id, product_version=1,
        product_name=name, product_short_name=short_name, custom_name=custom_name, price_model=model,
        price_frequency=frequency, quantity=Decimal(quantity), unit_amount=Decimal(unit_amount),
        recurring=not one_time, amount=Decimal(unit_amount) * Decimal(quantity),
    )


def quote(organization_id: UUID, owner: UUID, lines: list[QuoteSnapshotLine], *, currency: str = "USD",
          frequency: BillingFrequency = BillingFrequency.MONTHLY, status: QuoteStatus = QuoteStatus.APPROVED,
          term: int = 12, start: date | None = None, end: date | None = None, name: str = "Acme renewal",
          crm_id: str | None = "CRM-42", **changes: Any) -> QuoteSnapshot:
    snapshot = QuoteSnapshot(
        id=uuid4(), organization_id=organization_id, name=name, status=status, owner_user_id=owner,
        opportunity_id=uuid4(), opportunity_crm_id=crm_id, currency=currency, billing_frequency=frequency,
        subscription_term_months=term, start_date=start, end_date=end, pricebook_id=uuid4(),
        pricebook_version=3, recurring_per_billing_period=Decimal("0"), one_time=Decimal("0"),
        total_contract_value=Decimal("0"), lines=tuple(lines),
    )
    return replace(snapshot, **changes) if changes else snapshot


def connect(served: str, admin_key: str, code: str) -> requests.Response:
    """Completes the authorize flow for ``code`` (from ``stand_in.install()``), as the browser would."""
    browser, state = start_flow(served, admin_key)
    with browser:
        page = browser.get(f"{served}/external/v1/billing-connection/callback",
                           params={"code": code, "state": state}, timeout=10)
    assert outcome_of(page) == "connected", page.text
    return page


def outbox_events(session: Any, organization_id: UUID, event_type: str | None = None) -> list[dict[str, Any]]:
    rows = session.execute(
        text("SELECT envelope FROM outbox_events WHERE organization_id = :org ORDER BY occurred_at, id"),
        {"org": organization_id},
    ).scalars()
    envelopes = [row for row in rows if event_type is None or row["type"] == event_type]
    for envelope in envelopes:  # every event a test reads is one the catalogue documents
        assert_documented_event(EVENTS, envelope)
    return envelopes
