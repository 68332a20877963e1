"""Declarative base of the api's tables, with the shared naming convention."""

from datetime import datetime
from uuid import UUID

from sqlalchemy import DateTime, create_mock_engine, func
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.sql.elements import ClauseElement

from dps_common.db import new_metadata
from dps_common.ids import new_id


class Base(DeclarativeBase):
    metadata = new_metadata()


def uuid_pk() -> Mapped[UUID]:
    return mapped_column(primary_key=True, default=new_id)


def created_at() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now())


def driver_sql(stmt: ClauseElement) -> str:
    """``stmt`` as SQL for psycopg, compiled once: the hot reads and writes skip statement building,
    the session and SQLAlchemy's result processing, which cost more than running the query."""
    return str(stmt.compile(dialect=create_mock_engine("postgresql+psycopg://", executor=None).dialect))
