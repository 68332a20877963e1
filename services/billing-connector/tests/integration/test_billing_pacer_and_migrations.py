"""The shared pacer (one slot row per account in PostgreSQL, whichever process asks) and the
connector's Alembic tree (schema equals the models, naming convention, round trip)."""

from __future__ import annotations

import threading
from uuid import uuid4

from dps_common.testing.migrations import assert_round_trip, assert_schema_matches_models, misnamed_constraints

from dps_billing.worker.pacer import PostgresPacer


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
    # six turns at 0.5 s: the first goes at once, the last waits about 2.5 s; nobody shares a slot
    assert len(waits) == 5  # the first turn does not sleep
    assert max(waits) > 1.5
    ordered = sorted(waits)
    assert all(later - earlier > 0.3 for earlier, later in zip(ordered, ordered[1:]))
    other = PostgresPacer(engine, 2.0, sleep=record)
    other.wait_turn(f"acct_{uuid4().hex[:12]}")  # another account has its own slots: no wait
    assert len(waits) == 5


def test_the_schema_is_the_models_and_names_follow_the_convention(engine, dps_service):
    assert_schema_matches_models(engine, dps_service.metadata)
    assert misnamed_constraints(engine) == []


def test_migrations_go_down_to_nothing_and_up_again(dps_service):
    assert_round_trip(dps_service.package, dps_service.metadata)
