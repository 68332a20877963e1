"""A retry of a POST while its first run is still in progress (two threads, committed data on the
api's migrated database): the first run is held inside its transaction by a lock on the quotes
table, the retry gets 409 at once, and once the first answers the retry gets its answer replayed;
one quote exists. Purging expired keys is the shared middleware's (libs/common tests)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from uuid import uuid4

import pytest
from falcon import testing
from sqlalchemy import Engine, func, select, text

from dps_common.db import Transactions
from dps_testing.transactions import committed

from dps_api.composition import build_http
from dps_api.db.models.quotes import Quote
from dps_api.services.identity import IdentityService
from dps_api.settings import Settings

from api_orgs import Org, make_org
from quote_helpers import QUOTES, product, quote_body

WAIT_SECONDS = 30
_WAITING_ON_QUOTES = text("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'quotes'::regclass")


@pytest.fixture(scope="module")
def live_tx(database_url: str) -> Iterator[Transactions]:
    with committed(database_url, "dps-api-idempotency-race") as tx:
        yield tx


@pytest.fixture(scope="module")
def live_client(settings: Settings, live_tx: Transactions) -> testing.TestClient:
    return testing.TestClient(build_http(settings, tx=live_tx))


@pytest.fixture
def live_org(live_client: testing.TestClient) -> Org:
    ctx = live_client.app.context
    identity = IdentityService(ctx.tx, ctx.settings.api_key_pepper, ctx.now, ctx.authenticator.forget)
    return make_org(identity, f"Race {uuid4().hex[:8]}")


def _wait_until_blocked(engine: Engine) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    with engine.connect() as connection:
        while connection.execute(_WAITING_ON_QUOTES).scalar_one() == 0:
            assert time.monotonic() < deadline, "the first request never reached the quotes table"
            time.sleep(0.02)


def test_a_retry_while_the_first_is_still_running_is_409_and_after_it_the_answer_is_replayed(
    live_client, live_org, live_tx, engine
):
    body = quote_body({"productId": product(live_client, live_org)["id"], "quantity": "2"})
    headers = {**live_org.user.headers, "Idempotency-Key": "slow-quote"}
    answers: dict[str, testing.Result] = {}

    def send(name: str) -> threading.Thread:
        thread = threading.Thread(target=lambda: answers.setdefault(name, live_client.simulate_post(QUOTES, json=body, headers=headers)))
        thread.start()
        return thread

    with engine.connect() as locker:
        locker.execute(text("LOCK TABLE quotes IN EXCLUSIVE MODE"))  # reads pass, the first's insert waits
        first = send("first")
        try:
            _wait_until_blocked(engine)
            retry = send("retry")
            retry.join(WAIT_SECONDS)  # answered while the first still waits (it would wait too, unkeyed)
            assert "retry" in answers, "the retry waited for the first run"
        finally:
            locker.rollback()
            first.join(WAIT_SECONDS)
            retry.join(WAIT_SECONDS)
    assert answers["retry"].status_code == 409, answers["retry"].json
    assert answers["retry"].headers["content-type"] == "application/problem+json"
    assert answers["retry"].json["code"] == "idempotency_key_in_use"
    assert answers["first"].status_code == 201, answers["first"].json
    replay = live_client.simulate_post(QUOTES, json=body, headers=headers)
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json == answers["first"].json
    with live_tx.read() as session:
        count = session.scalar(select(func.count()).select_from(Quote).where(Quote.organization_id == live_org.id))
    assert count == 1
