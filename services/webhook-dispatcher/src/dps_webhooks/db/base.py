"""Declarative base of the dispatcher's tables, with the shared naming convention."""

from datetime import datetime
from uuid import UUID

from sqlalchemy import DateTime, func
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from dps_common.db import new_metadata
from dps_common.ids import new_id


class Base(DeclarativeBase):
    metadata = new_metadata()


def uuid_pk() -> Mapped[UUID]:
    return mapped_column(primary_key=True, default=new_id)


def timestamp() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True))


def defaults_to_now() -> Mapped[datetime]:
    return mapped_column(DateTime(timezone=True), server_default=func.now())
