"""Identifiers: UUIDv7, so ids sort by creation time and keyset paging on ``id`` is creation order."""

from uuid import UUID

from uuid6 import uuid7


def new_id() -> UUID:
    # a plain uuid.UUID: uuid6 returns a subclass that orjson refuses to serialise
    return UUID(int=uuid7().int)
