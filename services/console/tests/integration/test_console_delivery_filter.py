"""The delivery log's status filter is the dispatcher's (``?status=`` of its deliveries list), not a
filter of each fetched page: a filtered page is full of matches however many newer deliveries do
not match, and its next page (the dispatcher's cursor, bound to the filter) goes on with the same
filter. Against the real dispatcher, the statuses given in its database as its worker would."""

from __future__ import annotations

import re

import psycopg
import pytest

from dps_common.ids import new_id

from dps_console.composition import build_http
from dps_console.settings import Settings

from console_helpers import Browser

NEWER_PENDING = 51  # a full page of the log (50) and one more


@pytest.fixture
def admin(services_env, tx, mailbox, org) -> Browser:
    browser = Browser(build_http(Settings.from_env(services_env), tx=tx))
    browser.sign_in(mailbox, org.admin.email)
    return browser


def exhausted_then_newer_pending(database_url: str, endpoint_id: str) -> None:
    """The endpoint's one (test) delivery given up after its 8 attempts, then 51 newer ones pending."""
    with psycopg.connect(database_url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as db:
        db.execute("UPDATE webhook_deliveries SET status = 'EXHAUSTED', attempt_count = 8, next_attempt_at = NULL "
                   "WHERE endpoint_id = %s", (endpoint_id,))
        with db.cursor() as cur:
            cur.executemany(
                "INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status, is_test, "
                "attempt_count, created_at) SELECT %s, organization_id, endpoint_id, event_id, event_type, 'PENDING', "
                "is_test, 0, now() FROM webhook_deliveries WHERE endpoint_id = %s AND status = 'EXHAUSTED'",
                [(new_id(), endpoint_id) for _ in range(NEWER_PENDING)])


def listed(page: str, endpoint_id: str) -> list[str]:
    return re.findall(rf'href="/console/webhooks/{endpoint_id}/deliveries/([0-9a-f-]{{36}})', page)


def test_a_filtered_log_shows_the_matches_beyond_a_page_of_newer_others_and_pages_on_filtered(
        admin, webhooks_database):
    admin.open("/console/webhooks/new")
    created = admin.post("/console/webhooks/new", [("url", "https://127.0.0.1:9/hooks"), ("eventTypes", "quote.approved")])
    found = re.search(r'href="/console/webhooks/([0-9a-f-]{36})"', admin.get(created.headers["location"]).text)
    assert found, "no link to the new endpoint"
    endpoint = found.group(1)
    admin.get(f"/console/webhooks/{endpoint}")
    assert admin.post(f"/console/webhooks/{endpoint}/test").status_code == 303
    exhausted_then_newer_pending(webhooks_database, endpoint)
    log = f"/console/webhooks/{endpoint}/deliveries"

    unfiltered = admin.get(log).text
    assert len(listed(unfiltered, endpoint)) == 50 and "status-exhausted" not in unfiltered  # the newest 50 are pending
    exhausted = admin.get(log + "?status=EXHAUSTED").text
    assert len(listed(exhausted, endpoint)) == 1 and "status-exhausted" in exhausted  # not "No deliveries": a page of 50 others
    assert "cursor=" not in exhausted

    pending = admin.get(log + "?status=PENDING").text
    assert len(listed(pending, endpoint)) == 50
    next_link = re.search(r'href="([^"]*cursor=[^"]*)"', pending)
    assert next_link and "status=PENDING" in next_link.group(1)
    href = next_link.group(1).replace("&amp;", "&")
    rest = admin.get(log + href if href.startswith("?") else href).text
    assert len(listed(rest, endpoint)) == 1 and "status-exhausted" not in rest  # the 51st pending, still filtered
    assert not set(listed(rest, endpoint)) & set(listed(pending, endpoint))
