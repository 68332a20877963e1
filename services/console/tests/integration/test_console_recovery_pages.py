"""Issue 27's pages against the real api and dispatcher: the recovery form's own checks and the
dispatcher's refusal beside its field, another organization's and made-up ids (404), a view-only
person (403, no form), crafted query strings (the traffic window, the recovery's times), and the
requests-per-second field refusing what is not a whole number before anything is sent."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from dps_console.composition import build_http
from dps_console.settings import Settings

from console_helpers import Browser, watch_calls


@pytest.fixture
def pages(services_env, tx):
    return build_http(Settings.from_env(services_env), tx=tx)


@pytest.fixture
def admin(pages, mailbox, org) -> Browser:
    browser = Browser(pages)
    browser.sign_in(mailbox, org.admin.email)
    return browser


def add_endpoint(admin: Browser, url: str = "https://127.0.0.1:9/hooks") -> str:
    admin.open("/console/webhooks/new")
    created = admin.post("/console/webhooks/new", [("url", url), ("eventTypes", "quote.approved")])
    assert created.status_code == 303, created.text
    shown = admin.get(created.headers["location"])
    found = re.search(r'href="/console/webhooks/([0-9a-f-]{36})"', shown.text)
    assert found, shown.text
    return found.group(1)


def field(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def test_the_recovery_form_checks_its_times_and_shows_the_dispatchers_refusal_beside_the_field(admin):
    endpoint = add_endpoint(admin)
    base = f"/console/webhooks/{endpoint}"
    page = admin.get(base)
    assert page.status_code == 200 and f'action="{base}/recover"' in page.text
    for form, named in (([("since", "")], "since"), ([("since", "yesterday")], "since"),
                        ([("since", field(datetime.now(UTC))), ("until", "soon")], "until")):
        admin.get(base)
        refused = admin.post(base + "/recover", form)
        assert refused.status_code == 400 and f'id="{named}-errors"' in refused.text, refused.text
        assert 'aria-invalid="true"' in refused.text
    admin.get(base)
    too_old = admin.post(base + "/recover", [("since", field(datetime.now(UTC) - timedelta(days=40)))])
    assert too_old.status_code == 400 and 'id="since-errors"' in too_old.text, too_old.text
    assert "Enter a time within the last 30 days" in too_old.text
    admin.get(base)
    nothing = admin.post(base + "/recover", [("since", field(datetime.now(UTC) - timedelta(hours=1)))])
    assert nothing.status_code == 303 and nothing.headers["location"] == base
    assert "No failed delivery to send again in that time" in admin.get(base).text


def test_another_organizations_or_a_made_up_endpoint_is_not_found_and_a_viewer_is_refused(
        pages, admin, mailbox, other_org, org):
    endpoint = add_endpoint(admin)
    other = Browser(pages)
    other.sign_in(mailbox, other_org.admin.email)
    for made_up in (endpoint, "01a21390-1e93-7d46-97d4-cba121e02c6b"):
        assert other.get(f"/console/webhooks/{made_up}/recover").status_code == 404
        other.get("/console/webhooks")
        posted = other.post(f"/console/webhooks/{made_up}/recover", [("since", field(datetime.now(UTC)))])
        assert posted.status_code == 404 and "Page not found" in posted.text
    viewer = Browser(pages)
    viewer.sign_in(mailbox, org.viewer.email)
    refused = viewer.get(f"/console/webhooks/{endpoint}/recover")
    assert refused.status_code == 403 and "<form method=\"post\" action=\"/console/webhooks" not in refused.text


def test_crafted_query_strings_show_nothing_of_themselves(admin):
    endpoint = add_endpoint(admin)
    traffic = admin.get(f"/console/webhooks/{endpoint}?window=%3Cscript%3Ealert(1)%3C/script%3E")
    assert traffic.status_code == 200 and "<script>alert" not in traffic.text and "alert(1)" not in traffic.text
    assert 'aria-current="true">Last 24 hours' in traffic.text and "In the last 24 hours:" in traffic.text
    assert traffic.text.count("<tr><th scope=\"row\">") == 24  # the hourly table, every hour
    week = admin.get(f"/console/webhooks/{endpoint}?window=7d")
    assert "In the last 7 days:" in week.text and week.text.count("<tr><th scope=\"row\">") == 168
    recover = admin.get(f"/console/webhooks/{endpoint}/recover?since=%22%3E%3Cb%3Ex&until=2027-01-01T10:00")
    assert recover.status_code == 200 and "<b>x" not in recover.text and "&#34;&gt;" not in recover.text
    assert 'name="since" type="datetime-local" step="1" required value=""' in recover.text
    assert 'value="2027-01-01T10:00:00"' in recover.text  # a real time is filled in, to the second


def test_a_rate_limit_that_is_not_a_whole_number_is_refused_before_anything_is_sent(pages, admin, monkeypatch):
    admin.open("/console/webhooks/new")
    calls = watch_calls(monkeypatch, pages.context.backends.webhooks)
    refused = admin.post("/console/webhooks/new", [("url", "https://127.0.0.1:9/hooks"), ("rateLimitPerSecond", "2.5")])
    assert refused.status_code == 400 and 'id="rateLimitPerSecond-errors"' in refused.text
    assert "Enter a whole number of requests per second from 1 to 1000" in refused.text
    assert ("webhook dispatcher", "/webhook-configs") not in calls
    created = admin.post("/console/webhooks/new", [("url", "https://127.0.0.1:9/hooks"), ("rateLimitPerSecond", "7")])
    assert created.status_code == 303
    endpoint = re.search(r'href="/console/webhooks/([0-9a-f-]{36})"', admin.get(created.headers["location"]).text)
    assert endpoint and "at most 7 a second" in admin.get(f"/console/webhooks/{endpoint.group(1)}").text
