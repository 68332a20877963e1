"""Identifiers: UUIDv7, so ids sort by creation time and keyset paging on ``id`` is creation order."""

from uuid import UUID

from uuid6 import uuid7


def new_id() -> UUID:
    return uuid7()
