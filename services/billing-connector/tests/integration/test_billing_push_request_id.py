"""A push carries the request that queued it (issue 17): the ``X-Request-Id`` of ``POST .../billing-pushes``
is stored on the push, and the worker that runs it (against the billing stand-in) writes it on its
lines about the push, as the JSON formatter writes them on the worker's threads, and on the outbox row
of the ``billing.quote_pushed`` event it records (the relay publishes it as ``X-Request-Id``)."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import UUID, uuid4

import pytest
import requests
from sqlalchemy import text

from dps_common.db import Transactions
from dps_testing.json_logs import JsonLines, json_lines

from billing_helpers import connect, line, quote
from push_helpers import wait_for, worker_thread


@pytest.fixture
def worker_lines() -> Iterator[JsonLines]:
    with json_lines("dps.billing.worker") as lines:
        yield lines


@pytest.fixture
def org(served, fake_api, stand_in):
    org = fake_api.organization()
    connect(served, org.admin.key, stand_in.install())
    return org


def test_the_worker_carries_the_request_id_that_queued_the_push(
    served, fake_api, org, settings, committed_tx: Transactions, worker_lines: JsonLines
) -> None:
    snapshot = quote(org.id, org.user.user_id, [line(1), line(2)])
    fake_api.put_quote(snapshot)
    traced = f"req-push-{uuid4().hex[:12]}"
    resp = requests.post(
        f"{served}/external/v1/pricing-quotes/{snapshot.id}/billing-pushes",
        headers={"x-api-key": org.admin.key, "X-Request-Id": traced},
        timeout=10,
    )
    assert resp.status_code == 202, resp.text
    assert resp.headers["X-Request-Id"] == traced
    push_id = resp.json()["id"]
    with committed_tx() as session:
        stored = session.execute(text("SELECT request_id FROM billing_pushes WHERE id = :id"), {"id": UUID(push_id)})
        assert stored.scalar_one() == traced
    with worker_thread(settings):
        done = wait_for(served, org.user.key, snapshot.id, push_id)
    assert done["status"] == "succeeded", done
    lines = worker_lines.about(pushId=push_id)
    messages = [entry["message"] for entry in lines]
    assert "push claimed" in messages and "billing push succeeded" in messages, messages
    assert all(entry.get("requestId") == traced for entry in lines), lines
    with committed_tx() as session:
        rows = session.execute(
            text("SELECT request_id FROM outbox_events WHERE organization_id = :org AND event_type = :type"),
            {"org": org.id, "type": "billing.quote_pushed"},
        ).scalars().all()
    assert rows == [traced]
