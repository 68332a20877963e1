"""Never a duplicate: a worker killed with SIGKILL mid-push (its price calls in flight at the platform)
and started again creates each product, price and quote exactly once, also after the platform forgot
the idempotency keys; 429 storms and 500 bursts are ridden out; a refusal ends the push with the
platform's message."""

from __future__ import annotations

import signal
import time
from collections import Counter
from datetime import timedelta

import pytest
import requests
from sqlalchemy import update

from dps_billing.db.models import PushObject
from dps_billing.services.push_lines import LINES_IN_FLIGHT

from billing_helpers import connect, line, quote
from push_helpers import request_push, wait_for, worker_process, worker_thread

LINES = 5


@pytest.fixture
def org(served, fake_api, stand_in):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    org_account = requests.get(f"{served}/external/v1/billing-connection", headers={"x-api-key": org.admin.key},
                               timeout=10).json()["accountId"]
    return org, org_account


def assert_created_once(stand_in, account: str, snapshot) -> None:
    products = stand_in.objects("product", account)
    per_line = Counter(p["metadata"]["service_product_input_id"] for p in products)
    assert per_line == Counter({str(item.id): 1 for item in snapshot.lines}), per_line
    prices = stand_in.objects("price", account)
    assert sorted(p["product"] for p in prices) == sorted(p["id"] for p in products)
    quotes = stand_in.objects("quote", account)
    assert [q["metadata"]["service_pricing_quote_id"] for q in quotes] == [str(snapshot.id)]


def kill_mid_push(served, fake_api, stand_in, org, settings_env, tmp_path):
    """A push whose worker process is SIGKILLed while the platform holds its price calls: the lines under
    way (``LINES_IN_FLIGHT``) each made their product, and their price calls were received and not
    answered. The worker can send nothing more then (each of its line threads waits for its price; the
    quote waits for every line), so no call is in transit when it dies. The held calls are then let
    through and take effect, their answers lost with the worker: the push is left with products and
    prices on the platform whose ids it never stored."""
    member, account = org
    snapshot = quote(member.id, member.user.user_id, [line(n) for n in range(1, LINES + 1)])
    fake_api.put_quote(snapshot)
    held = stand_in.faults.hold(path_prefix="/v1/prices", method="POST")
    in_flight = min(LINES, LINES_IN_FLIGHT)
    process = worker_process(settings_env, tmp_path / "worker.log")
    try:
        push = request_push(served, member.admin.key, snapshot)
        stand_in.faults.wait_held(held, in_flight, timeout=60)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        stand_in.faults.release(held)
    prices = wait_for_platform(lambda: [r for r in stand_in.requests(path="/v1/prices", method="POST")
                                        if (r.idempotency_key or "").startswith(push["id"])], in_flight)
    assert all(r.status == 200 for r in prices), prices  # in effect on the platform, unknown to the push
    return snapshot, push


def wait_for_platform(answered, calls: int, timeout: float = 30) -> list:
    """The stand-in's recordings once it answered ``calls`` of them (it records a call once it is over)."""
    deadline = time.monotonic() + timeout
    while len(found := answered()) < calls:
        assert time.monotonic() < deadline, found
        time.sleep(0.02)
    return found


def test_a_worker_killed_mid_push_resumes_without_duplicates(served, fake_api, stand_in, org, settings_env,
                                                             settings, tmp_path):
    snapshot, push = kill_mid_push(served, fake_api, stand_in, org, settings_env, tmp_path)
    half = wait_for(served, org[0].user.key, snapshot.id, push["id"], done=lambda p: True)
    assert half["status"] == "running" and not half["progress"]["quoteCreated"]
    with worker_thread(settings):
        done = wait_for(served, org[0].user.key, snapshot.id, push["id"], timeout=60)
    assert done["status"] == "succeeded", done
    assert done["progress"] == {"linesTotal": LINES, "productsCreated": LINES, "pricesCreated": LINES,
                                "quoteCreated": True}
    assert_created_once(stand_in, org[1], snapshot)
    keys = [r.idempotency_key for r in stand_in.requests(path="/v1/products", method="POST")
            if (r.idempotency_key or "").startswith(push["id"])]
    assert set(keys) == {f"{push['id']}:{item.id}:product" for item in snapshot.lines}
    replayed = [r for r in stand_in.requests(path="/v1/prices", method="POST")
                if (r.idempotency_key or "").startswith(push["id"]) and r.replayed]
    assert len(replayed) == min(LINES, LINES_IN_FLIGHT)  # the held prices, asked again under their keys


def test_resumed_after_the_idempotency_keys_expired_it_finds_what_it_made(
        served, fake_api, stand_in, org, settings_env, settings, tmp_path, committed_tx):
    snapshot, push = kill_mid_push(served, fake_api, stand_in, org, settings_env, tmp_path)
    stand_in.expire_idempotency_keys()
    with committed_tx() as session:  # a day passed: the intents are older than the keys' lifetime
        session.execute(update(PushObject).where(PushObject.push_id == push["id"])
                        .values(sent_at=PushObject.sent_at - timedelta(hours=24)))
    lookups_before = len(stand_in.requests(path="/v1/prices", method="GET"))
    with worker_thread(settings):
        done = wait_for(served, org[0].user.key, snapshot.id, push["id"], timeout=60)
    assert done["status"] == "succeeded", done
    assert_created_once(stand_in, org[1], snapshot)
    assert len(stand_in.requests(path="/v1/prices", method="GET")) > lookups_before  # looked up, not re-made


def test_a_429_storm_is_ridden_out(served, fake_api, stand_in, org, settings):
    member, account = org
    snapshot = quote(member.id, member.user.user_id, [line(1), line(2)])
    fake_api.put_quote(snapshot)
    storm = stand_in.faults.add(path_prefix="/v1/p", status=429, retry_after=0.2, count=4)
    try:
        with worker_thread(settings):
            push = request_push(served, member.admin.key, snapshot)
            done = wait_for(served, member.user.key, snapshot.id, push["id"], timeout=90)
    finally:
        stand_in.faults.remove(storm)
    assert done["status"] == "succeeded", done
    limited = [r for r in stand_in.requests(path_prefix="/v1/p") if r.status == 429
               and (r.idempotency_key or "").startswith(push["id"])]
    assert len(limited) == 4
    assert_created_once(stand_in, account, snapshot)


def test_a_500_burst_is_ridden_out(served, fake_api, stand_in, org, settings):
    member, account = org
    snapshot = quote(member.id, member.user.user_id, [line(1), line(2)])
    fake_api.put_quote(snapshot)
    burst = stand_in.faults.add(path_prefix="/v1/products", status=500, count=3)
    try:
        with worker_thread(settings):
            push = request_push(served, member.admin.key, snapshot)
            done = wait_for(served, member.user.key, snapshot.id, push["id"], timeout=90)
    finally:
        stand_in.faults.remove(burst)
    assert done["status"] == "succeeded", done
    failed = [r for r in stand_in.requests(path="/v1/products") if r.status == 500
              and (r.idempotency_key or "").startswith(push["id"])]
    assert len(failed) == 3
    assert_created_once(stand_in, account, snapshot)


def test_a_refusal_ends_the_push_with_the_platform_s_message(served, fake_api, stand_in, org, settings):
    member, account = org
    snapshot = quote(member.id, member.user.user_id, [line(1)])
    fake_api.put_quote(snapshot)
    refusal = stand_in.faults.add(path_prefix="/v1/prices", status=400, code="parameter_invalid_integer", count=1)
    try:
        with worker_thread(settings):
            push = request_push(served, member.admin.key, snapshot)
            done = wait_for(served, member.user.key, snapshot.id, push["id"], timeout=60)
    finally:
        stand_in.faults.remove(refusal)
    assert done["status"] == "failed"
    assert done["error"]["code"] == "parameter_invalid_integer"
    assert "400" in done["error"]["message"]
    assert done["progress"]["productsCreated"] == 1 and done["progress"]["pricesCreated"] == 0
    assert stand_in.objects("quote", account) == []
