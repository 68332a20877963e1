"""A table of work rows that any number of workers share: which rows are due, claiming them under a
lease, renewing and giving back a claim, and waking the workers when work commits.

A claim is one statement: it locks due rows with ``FOR UPDATE SKIP LOCKED`` (so two workers never
take the same row and neither waits for the other), moves their lease column one lease ahead and
stamps them with a new token. If the worker dies, the rows fall due again when the lease ends and
another worker takes them over. Only the holder of the current token may renew, give back or
finish a row (``holding``): a worker whose lease ran out, and whose work another may be repeating,
changes nothing. All times come from the database clock (``now()``), never a worker's.

A queue without a lease column (the outbox) claims with ``lock_due`` instead: the rows stay locked
by the claiming transaction, which is their lease, ended by its commit or by the worker's death.

Each user builds its statements once, at import (building costs more than running them on a hot
path), and keeps its own columns, ordering and outcome rules; this module holds what they share.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import (
    ColumnElement,
    FromClause,
    Integer,
    Interval,
    Select,
    Update,
    Uuid,
    bindparam,
    func,
    select,
    true,
    update,
)
from sqlalchemy.orm import Session

from dps_common.work_queue.wakeup import Wakeup

_LEASE = bindparam("lease", type_=Interval())
_TOKEN = bindparam("token", type_=Uuid())


@dataclass(frozen=True)
class WorkQueue:
    """One work table. ``due`` says which rows may be claimed (at the statement's ``now()``),
    ``order_by`` which first; ``lease_until`` and ``token`` are the columns a claim sets (``None``
    for a queue leased by its claiming transaction); ``held`` is what else a held row satisfies
    (a status, say). ``joined`` are tables ``due`` reads besides ``table`` (inner joins by
    ``on``), ``lock_of`` what ``FOR UPDATE`` locks (``table`` unless said)."""

    table: Any  # an ORM class or a Core table: whatever update() and select() take
    key: Any  # its primary key column
    due: ColumnElement[bool]
    order_by: Any
    channel: str  # NOTIFY here when rows become due; the workers LISTEN
    lease_until: Any = None
    token: Any = None
    held: ColumnElement[bool] = field(default_factory=true)
    joined: Sequence[tuple[FromClause | Any, ColumnElement[bool]]] = ()
    lock_of: Any = None

    def __post_init__(self) -> None:
        if not self.channel.isidentifier():
            raise ValueError(f"a channel is a plain identifier, got {self.channel!r}")

    def lock_due(self, *columns: Any) -> Select[Any]:
        """``columns`` of up to ``:limit`` due rows, first first, locked until the transaction ends;
        rows another worker holds are skipped, not waited for."""
        statement = select(*columns)
        for target, on in self.joined:
            statement = statement.join(target, on)
        return (
            statement.where(self.due)
            .order_by(self.order_by)
            .limit(bindparam("limit", type_=Integer))
            .with_for_update(of=self.lock_of if self.lock_of is not None else self.table, skip_locked=True)
        )

    def claim_statement(
        self, *, returning: Sequence[Any], values: Mapping[str, Any] | None = None, where: Sequence[Any] = ()
    ) -> Update:
        """The claim: up to ``:limit`` due rows leased until ``now() + :lease`` under ``:token``, with
        ``values`` set too; ``where`` joins further tables for ``returning`` (an ``UPDATE ... FROM``)."""
        assert self.lease_until is not None and self.token is not None, "a claim needs lease columns"
        return (
            update(self.table)
            .where(self.key.in_(self.lock_due(self.key).scalar_subquery()), *where)
            .values({self.lease_until: func.now() + _LEASE, self.token: _TOKEN, **(values or {})})
            .returning(*returning)
        )

    def claim(self, session: Session, statement: Update, limit: int, lease_seconds: float) -> tuple[UUID, Sequence[Any]]:
        """Run a ``claim_statement``: the new token and the rows claimed under it (their columns are
        the statement's ``returning``)."""
        token = uuid.uuid4()
        parameters = {"limit": limit, "lease": timedelta(seconds=lease_seconds), "token": token}
        return token, session.connection().execute(statement, parameters).all()

    def holding(self, key: Any, token: UUID) -> ColumnElement[bool]:
        """The row ``key`` while the claim ``token`` still holds it."""
        condition: ColumnElement[bool] = (self.key == key) & (self.token == token) & self.held
        return condition

    def renew(self, session: Session, key: Any, token: UUID, lease_seconds: float) -> bool:
        """Extend the lease; False when it was lost (another worker took the row over): stop working on it."""
        renewed = session.connection().execute(
            update(self.table)
            .where(self.holding(key, token))
            .values({self.lease_until: func.now() + timedelta(seconds=lease_seconds)})
            .returning(self.key)
        )
        return renewed.first() is not None

    def release(self, session: Session, key: Any, token: UUID, values: Mapping[str, Any] | None = None) -> bool:
        """Give the row back now (the worker is stopping), due for any worker, which is woken at
        commit; ``values`` are set too. False when the claim was no longer held."""
        released = session.connection().execute(
            update(self.table)
            .where(self.holding(key, token))
            .values({self.lease_until: None, self.token: None, **(values or {})})
            .returning(self.key)
        )
        if released.first() is None:
            return False
        self.notify(session)
        return True

    def first_claim(self, token: UUID, lease_seconds: float) -> dict[str, Any]:
        """The columns of a row stored already claimed under ``token`` (due again when the lease
        ends), the lease as an offset from the statement's ``now()`` (for a column default of it)."""
        return {self.token.key: token, self.lease_until.key: timedelta(seconds=lease_seconds)}

    def notify(self, session: Session) -> None:
        """Wake the workers when this transaction commits (PostgreSQL folds repeats into one)."""
        session.connection().execute(select(func.pg_notify(self.channel, "")))

    def wakeup(self, database_url: str, application_name: str) -> Wakeup:
        """A connection of its own that listens on the queue's channel (``dps_common.work_queue.wakeup``)."""
        return Wakeup(database_url, self.channel, application_name)
