"""Declarative base of the connector's tables, with the shared naming convention; the shared outbox
table is on the same metadata, so the migration checks see it too."""

from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import DateTime, Table, func
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from dps_common.db import new_metadata
from dps_common.ids import new_id
from dps_common.outbox import outbox_table


class Base(DeclarativeBase):
    metadata = new_metadata()


OUTBOX: Table = outbox_table(Base.metadata)


def uuid_pk() -> Mapped[UUID]:
    return mapped_column(primary_key=True, default=new_id)


def timestamp() -> Mapped[Any]:
    """A timestamp column; the attribute's annotation says whether it may be NULL."""
    return mapped_column(DateTime(timezone=True))


def defaults_to_now() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now())
