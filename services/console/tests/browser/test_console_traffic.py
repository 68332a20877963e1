"""Issue 27's pages in headless Chromium, against the console served by gunicorn over HTTPS with the
real dispatcher (and its delivery worker) behind it: recovering an endpoint's failed deliveries since a
time (the answer in words, continuing when more than 1,000 remain, a disabled endpoint refused in a
person's words), the endpoint form's requests-per-second limit (out of range: said beside the field),
a delivery's request as sent (the body pretty-printed and exact, the signed headers), and the
endpoint's traffic as a chart drawn on the server over 24 hours and 7 days, with its table.

What only an outage or days of traffic make is written to the dispatcher's rows as its worker records
them (deliveries given up after 8 attempts, attempts over the past hours): the console reads them
through the dispatcher's own operations. Every page is checked with axe-core (0 serious or critical)
and saved as a screenshot (``traffic-*``)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from console_browser import ok, sign_in

from dps_common.ids import new_id

from console_helpers import served

pytestmark = pytest.mark.usefixtures("console")

WAIT_SECONDS = 20.0


def submit(page: Any, name: str, status: int = 200) -> None:
    """Clicks the button and lands on the page its POST leads to (or its answer), with ``status``."""
    with page.expect_navigation() as landed:
        page.get_by_role("button", name=name, exact=True).click()
    ok(landed.value, status)


def axe_clean(page: Any) -> None:
    from axe_playwright_python.sync_playwright import Axe

    found = [v for v in Axe().run(page).response["violations"] if v["impact"] in ("serious", "critical")]
    assert found == [], [(v["id"], v["impact"], v["help"], [n["target"] for n in v["nodes"]][:3]) for v in found]


def add_endpoint(page: Any, root: str, url: str, rate_limit: str = "") -> str:
    """Adds an endpoint for ``url``; the address of its page (without the console's root)."""
    ok(page.goto(root + "/webhooks/new"))
    page.get_by_label("URL").fill(url)
    if rate_limit:
        page.get_by_label("Requests per second (optional)").fill(rate_limit)
    submit(page, "Add the endpoint")
    href = page.get_by_role("link", name="Go to the endpoint").get_attribute("href")
    assert href and href.count("/") == 3, href
    return href.removeprefix("/console")


def utc_field(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")


@pytest.fixture(scope="module")
def dispatcher_db(databases: dict[str, str]) -> Callable[[], Any]:
    url = databases["dispatcher"].replace("postgresql+psycopg://", "postgresql://")
    return lambda: psycopg.connect(url, autocommit=True)


@pytest.fixture(scope="module")
def failing_receiver() -> Iterator[str]:
    """A receiver that answers 503 to every delivery."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
        return [b"busy"]

    with served(app) as origin:
        yield origin + "/failing"


def attempts(count: int) -> str:
    return f"{count} attempt{'' if count == 1 else 's'}"


def endpoint_id(detail: str) -> str:
    return detail.rsplit("/", 1)[1]


def sent_a_test_event(page: Any, root: str, detail: str, db: Callable[[], Any]) -> None:
    """Sends a test event (its event is the one the seeded history redelivers) and waits for its delivery."""
    ok(page.goto(root + detail))
    submit(page, "Send a test event")
    deadline = time.monotonic() + WAIT_SECONDS
    with db() as conn:
        while not conn.execute("SELECT 1 FROM webhook_deliveries WHERE endpoint_id = %s",
                               (endpoint_id(detail),)).fetchone():
            assert time.monotonic() < deadline, "no test delivery"
            time.sleep(0.1)


def seed_history(db: Callable[[], Any], detail: str, attempts: list[tuple[datetime, list[int]]], final: str) -> None:
    """Deliveries of the endpoint's test event as the worker records an outage or a day's traffic:
    each (first attempt's time, its attempts' statuses) one non-test delivery, ``final`` its status
    (SUCCESS when its last attempt answered 2xx)."""
    with db() as conn:
        org, event_id, event_type = conn.execute(
            "SELECT organization_id, event_id, event_type FROM webhook_deliveries WHERE endpoint_id = %s LIMIT 1",
            (endpoint_id(detail),)).fetchone()
        deliveries, rows = [], []
        for first, statuses in attempts:
            delivery = new_id()
            last = first + timedelta(seconds=30 * (len(statuses) - 1))
            status = "SUCCESS" if final == "SUCCESS" and 200 <= statuses[-1] < 300 else final
            deliveries.append((delivery, org, endpoint_id(detail), event_id, event_type, status, len(statuses),
                               first - timedelta(milliseconds=400), last, last, statuses[-1], 120))
            for i, code in enumerate(statuses):
                rows.append((new_id(), delivery, i + 1, first + timedelta(seconds=30 * i), code,
                             "ok" if code < 300 else "busy", None if code < 300 else f"HTTP {code}", 120))
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status, "
                "is_test, attempt_count, created_at, last_attempted_at, completed_at, last_response_status, "
                "last_duration_ms) VALUES (%s, %s, %s, %s, %s, %s, false, %s, %s, %s, %s, %s, %s)", deliveries)
            cur.executemany(
                "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, response_status, "
                "response_excerpt, error_message, duration_ms) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows)


def outage(db: Callable[[], Any], detail: str, count: int, since: datetime) -> None:
    """``count`` deliveries given up after 8 failed attempts, created a second apart from ``since``."""
    seed_history(db, detail, [(since + timedelta(seconds=i), [503] * 8) for i in range(count)], "EXHAUSTED")


def redeliveries(db: Callable[[], Any], detail: str) -> list[tuple[Any, Any]]:
    with db() as conn:
        return conn.execute("SELECT retry_of, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = %s "
                            "AND retry_of IS NOT NULL", (endpoint_id(detail),)).fetchall()


def test_recovering_failed_deliveries_since_a_time(page, console, mailbox, browser_org, receiver, dispatcher_db, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    detail = add_endpoint(page, root, receiver.url + "/recover-" + uuid.uuid4().hex[:8])
    sent_a_test_event(page, root, detail, dispatcher_db)
    started = datetime.now(UTC) - timedelta(minutes=40)
    outage(dispatcher_db, detail, 12, started)

    ok(page.goto(root + detail))
    recovery = page.get_by_role("region", name="Recover failed deliveries since …")
    recovery.get_by_label("Since (UTC)").fill(utc_field(started - timedelta(minutes=5)))
    axe_clean(page)
    shot(page, "traffic-01-endpoint-recover-form")
    submit(page, "Recover failed deliveries")
    notice = page.get_by_role("status").first.inner_text()
    assert notice.startswith("12 deliveries will be sent again, oldest first"), notice
    assert "More failed deliveries remain" not in notice
    assert page.url.split("?")[0] == root + detail
    assert len(redeliveries(dispatcher_db, detail)) == 12
    axe_clean(page)
    shot(page, "traffic-02-recovered")

    # Back and send the same form again: the same one-time token, nothing sent twice
    page.go_back()
    with page.expect_navigation():
        page.get_by_role("button", name="Recover failed deliveries", exact=True).click()
    assert len(redeliveries(dispatcher_db, detail)) == 12

    # the same window again, deliberately (a fresh page): the recovered ones are not recovered again
    ok(page.goto(root + detail))
    page.get_by_label("Since (UTC)").fill(utc_field(started - timedelta(minutes=5)))
    submit(page, "Recover failed deliveries")
    assert page.get_by_role("status").first.inner_text().startswith("No failed delivery to send again in that time")
    assert len(redeliveries(dispatcher_db, detail)) == 12


def test_more_than_a_thousand_are_recovered_by_continuing(page, console, mailbox, browser_org, receiver,
                                                          dispatcher_db, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    detail = add_endpoint(page, root, receiver.url + "/recover-many-" + uuid.uuid4().hex[:8])
    sent_a_test_event(page, root, detail, dispatcher_db)
    ok(page.goto(root + detail))
    submit(page, "Pause")  # the redeliveries are held: 1,001 are not sent to the receiver meanwhile
    started = datetime.now(UTC) - timedelta(hours=2)
    outage(dispatcher_db, detail, 1001, started)

    ok(page.goto(root + detail))
    page.get_by_label("Since (UTC)").fill(utc_field(started - timedelta(minutes=1)))
    page.get_by_label("Until (UTC, optional)").fill(utc_field(started + timedelta(hours=1)))
    submit(page, "Recover failed deliveries")
    notice = page.get_by_role("status").first.inner_text()
    assert notice.startswith("1,000 deliveries will be sent again, oldest first"), notice
    assert "More failed deliveries remain in that time" in notice
    assert page.get_by_role("heading", level=1).inner_text().startswith("Recover failed deliveries of ")
    assert page.get_by_label("Since (UTC)").input_value() == utc_field(started - timedelta(minutes=1))
    assert page.get_by_label("Until (UTC, optional)").input_value() == utc_field(started + timedelta(hours=1))
    axe_clean(page)
    shot(page, "traffic-03-recover-has-more")
    submit(page, "Continue recovering")
    notice = page.get_by_role("status").first.inner_text()
    assert notice.startswith("1 delivery will be sent again"), notice
    recovered = redeliveries(dispatcher_db, detail)
    assert len(recovered) == 1001 and len({r[0] for r in recovered}) == 1001
    assert all(next_at is None for _, next_at in recovered)  # held while paused


def test_a_disabled_endpoint_is_refused_in_words(page, console, mailbox, browser_org, failing_receiver,
                                                 dispatcher_db, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    detail = add_endpoint(page, root, failing_receiver + "/" + uuid.uuid4().hex[:8])
    ok(page.goto(root + detail))
    page.get_by_label("Since (UTC)").fill(utc_field(datetime.now(UTC) - timedelta(hours=3)))
    with dispatcher_db() as conn:  # meanwhile, its failures disable it (as the worker records it)
        conn.execute("UPDATE webhook_endpoints SET status = 'DISABLED', consecutive_failures = 100, "
                     "disabled_reason = '100 consecutive failed attempts' WHERE id = %s", (endpoint_id(detail),))
    submit(page, "Recover failed deliveries", status=409)
    said = page.get_by_role("alert").inner_text()
    assert said.startswith("This endpoint is disabled, so nothing can be sent to it: re-activate it first"), said
    assert "It was disabled because: 100 consecutive failed attempts" in said
    assert page.get_by_role("button", name="Recover failed deliveries").count() == 0
    axe_clean(page)
    shot(page, "traffic-04-recover-refused-disabled")
    ok(page.goto(root + detail))
    region = page.get_by_role("region", name="Recover failed deliveries since …")
    assert "re-activate it first" in region.inner_text() and region.get_by_role("button").count() == 0
    assert page.get_by_role("button", name="Re-activate").is_visible()


def test_the_requests_per_second_limit_on_the_form(page, console, mailbox, browser_org, receiver, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    ok(page.goto(root + "/webhooks/new"))
    page.get_by_label("URL").fill(receiver.url + "/limited-" + uuid.uuid4().hex[:8])
    field = page.get_by_label("Requests per second (optional)")
    field.evaluate("input => input.removeAttribute('max')")  # the dispatcher's own check
    field.fill("5000")
    submit(page, "Add the endpoint", status=400)
    errors = page.locator("#rateLimitPerSecond-errors").inner_text()
    assert errors == "Enter a whole number of requests per second from 1 to 1000, or leave it empty for no limit."
    assert field.get_attribute("aria-invalid") == "true" and field.input_value() == "5000"
    assert page.get_by_role("alert").inner_text() == "The endpoint is not saved: check the fields marked below."
    axe_clean(page)
    shot(page, "traffic-05-form-rate-limit-refused")
    field.fill("5")
    submit(page, "Add the endpoint")
    with page.expect_navigation():
        page.get_by_role("link", name="Go to the endpoint").click()
    facts = page.locator("dl.facts").inner_text()
    assert "Requests per second\tat most 5 a second" in facts or "at most 5 a second" in facts, facts
    with page.expect_navigation():
        page.get_by_role("link", name="Edit", exact=True).click()
    assert page.get_by_label("Requests per second (optional)").input_value() == "5"
    page.get_by_label("Requests per second (optional)").fill("")
    submit(page, "Save")
    assert "no limit" in page.locator("dl.facts").inner_text()


def test_a_delivery_shows_its_request_as_sent(page, console, mailbox, browser_org, receiver, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    detail = add_endpoint(page, root, receiver.url + "/as-sent-" + uuid.uuid4().hex[:8])
    ok(page.goto(root + detail))
    submit(page, "Send a test event")
    ok(page.goto(root + detail + "/deliveries"))
    deadline = time.monotonic() + WAIT_SECONDS
    while "SUCCESS" not in page.locator("tbody tr").first.inner_text():
        assert time.monotonic() < deadline, "the test delivery was not delivered"
        time.sleep(0.2)
        ok(page.reload())
    with page.expect_navigation():
        page.locator("tbody tr").first.get_by_role("link").click()
    main = page.get_by_role("main")
    assert "The request as sent" in main.inner_text()
    assert re.search(r"POST https?://\S+/as-sent-", page.locator("p.request-line").inner_text())
    headers = page.get_by_role("table", name=re.compile("^Headers of attempt 1, as sent"))
    shown = dict(zip(headers.locator("tbody th").all_inner_texts(), headers.locator("tbody td").all_inner_texts(),
                     strict=True))
    event_id = page.locator("dl.facts").first.locator("code").first.inner_text()
    assert shown["webhook-id"] == event_id and shown["X-Service-Attempt"] == "1"
    assert re.fullmatch(r"v1,[A-Za-z0-9+/]+=*", shown["webhook-signature"]), shown
    assert re.fullmatch(r"\d{10}", shown["webhook-timestamp"]), shown
    received = next(r for r in reversed(receiver.received) if "/as-sent-" in r["path"])
    exact = page.locator("details.exact")
    exact.locator("summary").click()
    assert exact.locator("pre").inner_text() == received["body"].decode()  # the bytes signed and sent
    assert re.match(r"The exact body as sent and signed \(\d+ bytes\)", exact.locator("summary").inner_text())
    pretty = page.get_by_label("The body, pretty-printed").inner_text()
    assert pretty.startswith("{\n  ") and f'"id": "{event_id}"' in pretty, pretty[:200]
    attempt = page.get_by_role("table", name="Every attempt, in order").locator("tbody tr").first
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", attempt.inner_text()) and "200" in attempt.inner_text()
    axe_clean(page)
    shot(page, "traffic-06-delivery-as-sent")


def test_the_endpoint_traffic_over_24_hours_and_7_days(page, console, mailbox, browser_org, receiver,
                                                       dispatcher_db, shot):
    root = console.root
    sign_in(page, root, mailbox, browser_org.admin.email)
    detail = add_endpoint(page, root, receiver.url + "/traffic-" + uuid.uuid4().hex[:8])
    sent_a_test_event(page, root, detail, dispatcher_db)
    deadline = time.monotonic() + WAIT_SECONDS
    with dispatcher_db() as conn:  # its attempt is counted too: made before the page is read
        while conn.execute("SELECT status FROM webhook_deliveries WHERE endpoint_id = %s",
                           (endpoint_id(detail),)).fetchone() != ("SUCCESS",):
            assert time.monotonic() < deadline, "the test delivery was not delivered"
            time.sleep(0.1)
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    history = []
    for hours_ago in range(1, 24 * 6, 5):  # a delivery most hours: at night one failure first
        for k in range(1 + hours_ago % 4):
            statuses = [503, 200] if (hours_ago + k) % 3 == 0 else [200]
            history.append((now - timedelta(hours=hours_ago, minutes=-7 * k - 2), statuses))
    seed_history(dispatcher_db, detail, history, "SUCCESS")
    expected_24h = [h for h in history if h[0] >= now - timedelta(hours=23)]

    ok(page.goto(root + detail))
    traffic = page.get_by_role("region", name="Traffic")
    assert traffic.get_by_role("link", name="Last 24 hours").get_attribute("aria-current") == "true"
    chart = traffic.get_by_role("img", name="Attempts per hour in the last 24 hours, succeeded and failed")
    assert chart.is_visible()
    totals = traffic.locator(".totals").first.inner_text()
    succeeded = sum(1 for _, s in expected_24h) + 1  # the test event's attempt too
    failed = sum(s.count(503) for _, s in expected_24h)
    assert totals == f"In the last 24 hours: {attempts(succeeded)} succeeded and {attempts(failed)} failed.", totals
    assert "Half of the deliveries that succeeded did so within" in traffic.inner_text()
    assert "95 in 100 within" in traffic.inner_text()
    table = traffic.get_by_role("table", name="Attempts per hour in the last 24 hours (UTC)", include_hidden=True)
    assert table.locator("tbody tr").count() == 24
    assert chart.locator("rect.bad").count() >= 1 and chart.locator("rect.ok").count() >= 3
    axe_clean(page)
    shot(page, "traffic-07-endpoint-24h")
    traffic.locator("details.hourly summary").click()
    axe_clean(page)
    shot(page, "traffic-08-endpoint-24h-table")

    with page.expect_navigation():
        traffic.get_by_role("link", name="Last 7 days").click()
    traffic = page.get_by_role("region", name="Traffic")
    assert "window=7d" in page.url and traffic.get_by_role("link", name="Last 7 days").get_attribute("aria-current") == "true"
    assert traffic.get_by_role("img", name="Attempts per hour in the last 7 days, succeeded and failed").is_visible()
    assert traffic.get_by_role("table", include_hidden=True).locator("tbody tr").count() == 168
    assert traffic.locator(".totals").first.inner_text().startswith("In the last 7 days:")
    axe_clean(page)
    shot(page, "traffic-09-endpoint-7d")
