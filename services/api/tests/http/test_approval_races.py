"""Concurrent decisions on real, committing transactions: no vote lost or counted twice, and a recall
racing the last approval leaves quote and request in agreement."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import falcon.testing
import pytest

from dps_common.db import Transactions, make_engine
from dps_testing.services import fresh_database

from dps_api.composition import build_http
from dps_api.db.migrate import upgrade
from dps_api.services.identity import IdentityService
from dps_api.settings import Settings

from api_orgs import make_org
from approval_helpers import (
    APPROVALS,
    TERM_ABOVE_24,
    approval_group,
    decide,
    product,
    quote,
    quote_status,
    recall,
    rule,
    submit,
)


@pytest.fixture(scope="module")
def committing_client():
    """An app whose use cases commit for real (not inside a test's rolled-back transaction), on a database
    of its own, so two requests can race."""
    with fresh_database("dps_api_approval_race") as url:
        upgrade(url)
        secrets = {"API_KEY_PEPPER": "race-pepper-" + "0" * 32, "CURSOR_SECRET": "race-cursor-" + "1" * 32}
        settings = Settings.from_env({"DATABASE_URL": url, **secrets})
        tx = Transactions.for_engine(make_engine(url))
        app = build_http(settings, tx=tx)
        ctx = app.context
        identity = IdentityService(ctx.tx, settings.api_key_pepper, ctx.now, ctx.authenticator.forget)
        yield falcon.testing.TestClient(app), make_org(identity, "Race Corp")
        tx.dispose()


def race(*calls):
    """Runs the calls at the same moment on their own threads; their responses in call order."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return [f.result() for f in [pool.submit(run, call) for call in calls]]


def test_concurrent_approvals_never_lose_or_double_count_a_vote(committing_client):
    client, org = committing_client
    a, b = org.member("user", "race-a@race.example"), org.member("user", "race-b@race.example")
    pair = approval_group(client, org, [a, b], required=2, name="Pair")
    rule(client, org, pair, TERM_ABOVE_24)
    item = product(client, org)["id"]
    for _ in range(3):
        approval = submit(client, org.user, quote(client, org.user, item, term=36)["id"])
        # two members at once: both votes count, and the second completes the chain
        first, second = race(lambda: decide(client, a, approval["id"]), lambda: decide(client, b, approval["id"]))
        assert (first.status_code, second.status_code) == (200, 200)
        final = client.simulate_get(f"{APPROVALS}/{approval['id']}", headers=org.viewer.headers).json
        assert final["status"] == "APPROVED"
        assert sorted(v["userId"] for v in final["steps"][0]["requirements"][0]["approvals"]) == sorted(
            [str(a.user_id), str(b.user_id)]
        )
        assert quote_status(client, org, approval["quoteId"]) == "APPROVED"

    # the same member twice at once: one vote counts, the other is refused
    approval = submit(client, org.user, quote(client, org.user, item, term=36)["id"])
    twice = race(lambda: decide(client, a, approval["id"]), lambda: decide(client, a, approval["id"]))
    codes = sorted(r.status_code for r in twice)
    assert codes == [200, 409]
    read = client.simulate_get(f"{APPROVALS}/{approval['id']}", headers=org.viewer.headers).json
    assert len(read["steps"][0]["requirements"][0]["approvals"]) == 1

    # a recall racing the completing approval: exactly one wins, and quote and request agree
    resp = race(lambda: decide(client, b, approval["id"]), lambda: recall(client, org.user, approval["quoteId"]))
    assert sorted(r.status_code for r in resp) == [200, 409]
    final = client.simulate_get(f"{APPROVALS}/{approval['id']}", headers=org.viewer.headers).json
    expected_quote = {"APPROVED": "APPROVED", "RECALLED": "DRAFT"}[final["status"]]
    assert quote_status(client, org, approval["quoteId"]) == expected_quote
