"""``dps_common.work_queue.WorkQueue`` on real PostgreSQL: racing claimers never share a row, a lease
that ended is taken over under a new token, only the current token renews or releases, a release and
a notify wake a listener, and a transaction-leased queue (the outbox's) skips the rows another
transaction holds."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from datetime import timedelta
from uuid import UUID

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, Uuid, func, insert, select, text, update
from sqlalchemy.orm import Session

from dps_common.db import Transactions
from dps_common.work_queue import WorkQueue
from dps_testing.services import fresh_database
from dps_testing.transactions import committed

CHANNEL = "dps_work_queue_test"
LISTENER = "dps-work-queue-test-listen"
LEASE_SECONDS = 600.0  # never ends by itself during a test: the tests end leases explicitly
WAIT_SECONDS = 10.0  # a deadline for what must happen, never a measured time

metadata = MetaData()
JOBS = Table(
    "jobs",
    metadata,
    Column("id", Uuid(), primary_key=True),
    Column("position", Integer(), nullable=False),
    Column("status", String(16), nullable=False, server_default="queued"),
    Column("lease_until", DateTime(timezone=True)),
    Column("claim_token", Uuid()),
    Column("claims", Integer(), nullable=False, server_default="0"),
)
QUEUE = WorkQueue(
    JOBS,
    JOBS.c.id,
    # queued and due, or running with its lease ended (its worker died)
    due=((JOBS.c.status == "queued") & ((JOBS.c.lease_until.is_(None)) | (JOBS.c.lease_until <= func.now())))
    | ((JOBS.c.status == "running") & (JOBS.c.lease_until < func.now())),
    order_by=JOBS.c.position,
    channel=CHANNEL,
    lease_until=JOBS.c.lease_until,
    token=JOBS.c.claim_token,
    held=JOBS.c.status == "running",
)
CLAIM = QUEUE.claim_statement(values={"status": "running", "claims": JOBS.c.claims + 1}, returning=[JOBS.c.id])
LOCK_QUEUED = WorkQueue(JOBS, JOBS.c.id, due=JOBS.c.status == "queued", order_by=JOBS.c.position, channel=CHANNEL)


@pytest.fixture(scope="module")
def database() -> Iterator[tuple[str, Transactions]]:
    """A database with the jobs table: its URL, and transactions on it."""
    with fresh_database("dps_work_queue_test") as url, committed(url, "dps-work-queue-test") as transactions:
        with transactions() as session:
            metadata.create_all(session.connection())
        yield url, transactions


@pytest.fixture
def database_url(database: tuple[str, Transactions]) -> str:
    return database[0]


@pytest.fixture
def tx(database: tuple[str, Transactions]) -> Transactions:
    return database[1]


@pytest.fixture
def jobs(tx: Transactions) -> list[UUID]:
    """Ten queued jobs, in order; the table holds nothing else."""
    ids = [uuid.uuid4() for _ in range(10)]
    with tx() as session:
        session.execute(JOBS.delete())
        session.execute(insert(JOBS), [{"id": job, "position": i} for i, job in enumerate(ids)])
    return ids


def _claim(tx: Transactions, limit: int) -> tuple[UUID, list[UUID]]:
    with tx() as session:
        token, rows = QUEUE.claim(session, CLAIM, limit, LEASE_SECONDS)
    return token, [row.id for row in rows]


def _fail_instead_of_waiting_for_locks(session: Session) -> None:
    """Without SKIP LOCKED, the claim would wait for the other transaction's rows: an error here."""
    session.execute(text("SET LOCAL lock_timeout = '2s'"))


def _end_leases(tx: Transactions) -> None:
    """As if every lease's time had passed (its worker died)."""
    with tx() as session:
        session.execute(update(JOBS).values(lease_until=func.now() - timedelta(seconds=1)))


def _rows(tx: Transactions) -> dict[UUID, tuple[str, UUID | None, int]]:
    with tx.read() as session:
        return {row.id: (row.status, row.claim_token, row.claims) for row in session.execute(select(JOBS))}


def test_a_claim_takes_the_first_due_rows_under_one_token(tx, jobs):
    token, claimed = _claim(tx, 3)
    assert set(claimed) == set(jobs[:3])
    rows = _rows(tx)
    assert {job for job, (status, held_by, _) in rows.items() if status == "running" and held_by == token} == set(
        jobs[:3]
    )
    assert set(_claim(tx, 100)[1]) == set(jobs[3:])  # the rest, never the held ones again


def test_two_claimers_racing_never_take_the_same_row_and_leave_none(tx, jobs):
    """Two claimers in open transactions at once: the second skips the first's locked rows instead of
    waiting for them; then many claimers on threads share the rest without overlap."""
    with tx() as first, tx() as second:
        _, mine = QUEUE.claim(first, CLAIM, 2, LEASE_SECONDS)
        _fail_instead_of_waiting_for_locks(second)
        _, theirs = QUEUE.claim(second, CLAIM, 2, LEASE_SECONDS)
        assert {row.id for row in mine} == set(jobs[:2])
        assert {row.id for row in theirs} == set(jobs[2:4])

    taken: list[list[UUID]] = []
    start = threading.Barrier(4)

    def claimer() -> None:
        start.wait()
        while True:
            _, claimed = _claim(tx, 1)
            if not claimed:
                return
            taken.append(claimed)

    threads = [threading.Thread(target=claimer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT_SECONDS)
    flat = [job for batch in taken for job in batch]
    assert sorted(flat) == sorted(jobs[4:])  # each remaining job exactly once
    assert all(claims == 1 for _, _, claims in _rows(tx).values())


def test_a_lease_that_ended_is_taken_over_and_the_old_token_changes_nothing(tx, jobs):
    old_token, claimed = _claim(tx, 10)
    assert _claim(tx, 10)[1] == []  # leased: nobody else takes them
    _end_leases(tx)
    new_token, taken_over = _claim(tx, 10)
    assert set(taken_over) == set(claimed) and new_token != old_token
    with tx() as session:
        assert not QUEUE.renew(session, jobs[0], old_token, LEASE_SECONDS)
        assert not QUEUE.release(session, jobs[0], old_token)
    assert all(held_by == new_token and claims == 2 for _, held_by, claims in _rows(tx).values())


def test_renewing_keeps_a_lease_only_for_its_token(tx, jobs):
    token, _ = _claim(tx, 1)
    _end_leases(tx)
    with tx() as session:
        assert not QUEUE.renew(session, jobs[0], uuid.uuid4(), LEASE_SECONDS)  # a wrong token is refused
        assert not QUEUE.renew(session, jobs[1], token, LEASE_SECONDS)  # not a row this claim holds
        assert QUEUE.renew(session, jobs[0], token, LEASE_SECONDS)
    assert jobs[0] not in _claim(tx, 10)[1]  # renewed: still held, while the rest were due


def test_a_row_not_held_any_more_is_not_renewed(tx, jobs):
    token, _ = _claim(tx, 1)
    with tx() as session:
        session.execute(update(JOBS).where(JOBS.c.id == jobs[0]).values(status="succeeded"))
        assert not QUEUE.renew(session, jobs[0], token, LEASE_SECONDS)


def test_a_release_makes_the_row_due_at_once_and_wakes_a_listener(database_url, tx, jobs):
    token, _ = _claim(tx, 1)
    wakeup = QUEUE.wakeup(database_url, LISTENER)
    wakeup.listen()
    try:
        with tx() as session:
            assert QUEUE.release(session, jobs[0], token, {"status": "queued"})
        assert wakeup.wait(WAIT_SECONDS)
    finally:
        wakeup.close()
    assert _rows(tx)[jobs[0]] == ("queued", None, 1)
    assert jobs[0] in _claim(tx, 1)[1]


def test_notify_wakes_a_listener_at_commit_only(database_url, tx):
    wakeup = QUEUE.wakeup(database_url, LISTENER)
    wakeup.listen()
    try:
        with pytest.raises(RuntimeError), tx() as session:
            QUEUE.notify(session)
            raise RuntimeError("rolled back")
        with tx() as session:
            QUEUE.notify(session)
        assert wakeup.wait(WAIT_SECONDS)
        wakeup.drain()
        assert not wakeup.wait(0.2)  # the rollback's never came
    finally:
        wakeup.close()


def test_rows_stored_already_claimed_are_due_only_when_their_lease_ends(tx, jobs):
    token = uuid.uuid4()
    first = QUEUE.first_claim(token, LEASE_SECONDS)
    with tx() as session:
        session.execute(JOBS.delete())
        session.execute(
            insert(JOBS).values(
                id=jobs[0], position=0, status="running", claim_token=first["claim_token"],
                lease_until=func.now() + first["lease_until"],
            )
        )
    assert _claim(tx, 10)[1] == []
    _end_leases(tx)
    assert _claim(tx, 10)[1] == [jobs[0]]


def test_a_transaction_leased_queue_skips_what_another_transaction_holds(tx, jobs):
    lock = LOCK_QUEUED.lock_due(JOBS.c.id)
    with tx() as first:
        held = first.connection().execute(lock, {"limit": 3}).scalars().all()
        with tx() as second:
            _fail_instead_of_waiting_for_locks(second)
            other = second.connection().execute(lock, {"limit": 3}).scalars().all()
        assert held == jobs[:3] and other == jobs[3:6]
    with tx() as third:  # the first transaction ended: its rows are free again
        assert third.connection().execute(lock, {"limit": 3}).scalars().all() == jobs[:3]


def test_a_channel_must_be_a_plain_identifier():
    with pytest.raises(ValueError):
        WorkQueue(JOBS, JOBS.c.id, due=JOBS.c.status == "queued", order_by=JOBS.c.id, channel="jobs; DROP TABLE x")
