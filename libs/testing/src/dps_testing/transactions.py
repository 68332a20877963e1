"""Per-test isolation on a shared migrated database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine
from sqlalchemy.orm import sessionmaker

from dps_common.db import Transactions, make_engine


@contextmanager
def rolled_back(engine: Engine) -> Iterator[Transactions]:
    """Every use case's transaction becomes a savepoint of one outer transaction, rolled back when
    the block ends, so tests never see each other's rows."""
    connection = engine.connect()
    outer = connection.begin()
    try:
        yield Transactions(sessionmaker(bind=connection, expire_on_commit=False, join_transaction_mode="create_savepoint"))
    finally:
        outer.rollback()
        connection.close()


@contextmanager
def committed(database_url: str, application_name: str) -> Iterator[Transactions]:
    """Real transactions on their own engine, for tests whose workers run in other threads or
    processes and must see committed rows; ``application_name`` tells their connections apart."""
    engine = make_engine(database_url, application_name=application_name)
    transactions = Transactions.for_engine(engine)
    try:
        yield transactions
    finally:
        transactions.dispose()
