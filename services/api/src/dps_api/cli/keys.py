"""``keys rotate|revoke --key``: the key's id (a UUID) or the ``dps_...`` prefix the command line
printed (``keys create``, ``keys list``), resolved to the id once the database is at hand."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from dps_common.auth.keys import PREFIX

from dps_api.composition import Admin


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


def key_row_id(admin: Admin, key: UUID | KeyPrefix) -> UUID:
    """The id of the key ``key`` names (a rotated key has a new prefix: the old one names nothing)."""
    return key if isinstance(key, UUID) else admin.identity.key_with_prefix(key.key_id)
