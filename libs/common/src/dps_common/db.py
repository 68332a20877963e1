"""Database plumbing: the declarative base with a naming convention, engines and transactions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import MetaData, create_engine, text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from dps_common.http.json import dumps

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def new_metadata() -> MetaData:
    return MetaData(naming_convention=NAMING_CONVENTION)


def sqlalchemy_url(database_url: str) -> str:
    """Accept plain ``postgresql://`` URLs and select the psycopg 3 driver."""
    for prefix in ("postgresql+psycopg://", "postgresql://", "postgres://"):
        if database_url.startswith(prefix):
            return "postgresql+psycopg://" + database_url[len(prefix) :]
    raise ValueError("DATABASE_URL must be a postgresql:// URL")


def make_engine(database_url: str, *, pool_size: int = 5, application_name: str = "dps") -> Engine:
    return create_engine(
        sqlalchemy_url(database_url),
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        connect_args={"application_name": application_name},
        json_serializer=lambda value: dumps(value).decode(),
    )


class Transactions:
    """One transaction per use case: ``with tx() as session`` commits on success, rolls back on error."""

    def __init__(self, factory: sessionmaker[Session]):
        self._factory = factory

    @classmethod
    def for_engine(cls, engine: Engine) -> "Transactions":
        return cls(sessionmaker(engine, expire_on_commit=False))

    @contextmanager
    def __call__(self) -> Iterator[Session]:
        with self._factory.begin() as session:
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only use case: same isolation, no writes expected."""
        with self._factory.begin() as session:
            yield session


def ping(engine: Engine) -> None:
    with engine.connect() as connection:
        connection.execute(text("SELECT 1"))
