"""The shared pacer (one slot row per account in PostgreSQL, whichever process asks; the turn of a
worker that died mid-call holds the account only while its claim's lease lasts) and the connector's
Alembic tree (schema equals the models, naming convention, round trip)."""

from __future__ import annotations

import threading
import time
from uuid import UUID, uuid4

import pytest
import requests
from sqlalchemy import text

from dps_testing.migrations import assert_round_trip, assert_schema_matches_models, misnamed_constraints

from dps_billing.adapters.billing_platform.postgres_pacer import PostgresPacer, for_claim


def test_pacers_of_different_workers_share_one_rate_per_account(engine):
    waits: list[float] = []
    lock = threading.Lock()

    def record(seconds: float) -> None:
        with lock:
            waits.append(seconds)

    account = f"acct_{uuid4().hex[:12]}"
    pacers = [PostgresPacer(engine, 2.0, sleep=record) for _ in range(2)]  # two workers, 2 calls/s in all
    threads = [threading.Thread(target=lambda p=p: [p.wait_turn(account) for _ in range(3)]) for p in pacers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    # six turns at 0.5 s from two workers: one sequence, one set of slots (the last waits about 2.5 s)
    assert max(waits) > 1.5
    with engine.connect() as connection:
        turns = connection.execute(text("SELECT turns FROM billing_pacer_slots WHERE account_id = :a"),
                                   {"a": account}).scalar_one()
    assert turns == 6
    recorded = len(waits)
    other = PostgresPacer(engine, 2.0, sleep=record)
    other.wait_turn(f"acct_{uuid4().hex[:12]}")  # another account has its own slots: no wait
    assert len(waits) == recorded


def test_the_platform_never_sees_more_than_the_rate_in_any_second_with_bursts_late_calls_and_retries(
        engine, stand_in):
    """20 calls per second, three workers' pacers on one account, bursts of calls from threads whose first
    call reaches the platform late (a connection's setup), and retried 500s: counted at the platform, no
    one-second window holds more than 20 (even spacing alone let 21 in: the turns 20 apart are exactly
    a second apart, and a late first call crowds the next ones)."""
    account = stand_in.config.platform_account  # the app's own key acts on it
    pacers = [PostgresPacer(engine, 20.0) for _ in range(3)]
    stand_in.clear_requests()
    stand_in.faults.add(path_prefix="/v1/products", status=500, count=4)
    errors: list[BaseException] = []

    def burst(pacer: PostgresPacer, calls: int) -> None:
        with requests.Session() as session:
            first = True
            for _ in range(calls):
                for _attempt in range(3):  # a 500 is retried: another turn
                    with pacer.turn(account):
                        if first:
                            time.sleep(0.03)  # connection setup: this call reaches the platform late
                            first = False
                        answer = session.get(f"{stand_in.api_url}/v1/products", auth=(stand_in.config.secret_key, ""), timeout=10)
                    if answer.status_code != 500:
                        break

    def run(pacer: PostgresPacer, calls: int) -> None:
        try:
            burst(pacer, calls)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    try:
        for calls in (25, 20):  # two bursts: the second starts while the first's last second is still counted
            threads = [threading.Thread(target=run, args=(pacer, calls)) for pacer in pacers]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
    finally:
        stand_in.faults.clear()
    assert errors == []
    received = stand_in.requests(path_prefix="/v1/products")
    assert len(received) >= 135 and sum(1 for r in received if r.status == 500) == 4
    assert stand_in.busiest_window(1.0, path_prefix="/v1/", account=account) <= 20


class StillWaiting(Exception):
    """The pacer polled on and on: a turn before it is still taken for running."""


def running_push(engine, lease: str) -> tuple[UUID, UUID]:
    """A push claimed by a worker under a lease ending at ``now() + lease``: its id and claim token."""
    push_id, token = uuid4(), uuid4()
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO billing_pushes (id, organization_id, quote_id, requested_by, status, snapshot, claim_token, "
            "lease_until) VALUES (:id, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'running', '{}', "
            ":token, now() + CAST(:lease AS interval))"), {"id": push_id, "token": token, "lease": lease})
    return push_id, token


def test_the_turn_of_a_worker_that_died_mid_call_holds_the_account_only_while_its_lease_lasts(engine):
    """One call per second: a call waits until the one before it ended. A worker killed during its
    call never ends its turn; the next call waits while the dead worker's claim still holds its push,
    and not once the lease has run out (before: two minutes after the turn's slot)."""
    account = f"acct_{uuid4().hex[:12]}"
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # no time passes: the pacer's waits are only counted
        waits.append(seconds)
        if len(waits) > 50:
            raise StillWaiting()

    pacer = PostgresPacer(engine, 1.0, sleep=sleep)
    dead_push, dead_token = running_push(engine, "60 seconds")
    with for_claim(dead_push, dead_token):
        dying = pacer.turn(account)
        dying.__enter__()  # the call starts, and its worker is killed: the turn is never left
    push, token = running_push(engine, "60 seconds")
    with for_claim(push, token), pytest.raises(StillWaiting), pacer.turn(account):
        pass  # the dead worker's lease still runs: its call may still be under way
    with engine.begin() as connection:
        connection.execute(text("UPDATE billing_pushes SET lease_until = now() - interval '1 second' WHERE id = :id"),
                           {"id": dead_push})
    waits.clear()
    with for_claim(push, token), pacer.turn(account):
        pass  # the lease ran out: the dead turn counts as ended (a slot and the window's second to wait)
    with engine.connect() as connection:
        ended = connection.execute(text(
            "SELECT done_at IS NOT NULL FROM billing_pacer_turns WHERE account_id = :a AND claim_token = :t"),
            {"a": account, "t": dead_token}).scalar_one()
    assert ended and len(waits) <= 2
    del dying


def test_the_schema_is_the_models_and_names_follow_the_convention(engine, dps_service):
    assert_schema_matches_models(engine, dps_service.metadata)
    assert misnamed_constraints(engine) == []


def test_migrations_go_down_to_nothing_and_up_again(dps_service):
    assert_round_trip(dps_service.package, dps_service.metadata)
