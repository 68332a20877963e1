"""``keys rotate|revoke --key``: the key's id (a UUID) or the ``dps_...`` prefix the command line
printed (``keys create``, ``keys list``), resolved to the id once the database is at hand."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from sqlalchemy import select

from dps_common.auth.keys import PREFIX
from dps_common.db import Transactions
from dps_common.errors import not_found

from dps_api.db.models.identity import ApiKey


@dataclass(frozen=True)
class KeyPrefix:
    """``dps_<key id>``: what ``keys create`` and ``keys list`` print as ``prefix``."""

    key_id: str

    @classmethod
    def parse(cls, raw: str) -> "KeyPrefix | None":
        head, sep, key_id = raw.strip().partition("_")
        if head != PREFIX or not sep or not key_id or "_" in key_id or len(key_id) > 64:
            return None  # a full key (prefix_secret) is not taken: it would sit in the shell's history
        return cls(key_id)


def key_row_id(tx: Transactions, key: UUID | KeyPrefix) -> UUID:
    """The id of the key ``key`` names (a rotated key has a new prefix: the old one names nothing)."""
    if isinstance(key, UUID):
        return key
    with tx.read() as session:
        found = session.scalar(select(ApiKey.id).where(ApiKey.key_id == key.key_id))
    if found is None:
        raise not_found(f"API key with prefix {PREFIX}_{key.key_id}")
    return found
