"""Output of the admin command line: aligned tables for people, ``--json`` for scripts.

Field names follow the API's camelCase. Secrets appear only in the one answer that issues them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol, TextIO
from uuid import UUID

SHOWN_ONCE = (
    "WARNING: this is the only time this API key is shown. Store it in a secret manager now; "
    "it cannot be shown again (only a keyed hash is kept)."
)


class Organization(Protocol):
    """What is printed of the rows the identity use cases answer with (``dps_api.services.identity``)."""

    id: UUID
    name: str
    created_at: datetime


class User(Protocol):
    id: UUID
    organization_id: UUID
    email: str
    name: str
    role: str
    created_at: datetime


class ApiKey(Protocol):
    id: UUID
    name: str
    role: str
    user_id: UUID
    key_id: str
    status: str
    kind: str
    expires_at: datetime | None
    created_at: datetime
    last_used_at: datetime | None
    rotated_at: datetime | None
    revoked_at: datetime | None


class IssuedKey(Protocol):  # a frozen dataclass: read-only members
    @property
    def id(self) -> UUID: ...
    @property
    def name(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def user_id(self) -> UUID: ...
    @property
    def key_prefix(self) -> str: ...
    @property
    def secret(self) -> str: ...


def organization(org: Organization) -> dict[str, Any]:
    return {"id": org.id, "name": org.name, "createdAt": org.created_at}


def user(row: User) -> dict[str, Any]:
    return {
        "id": row.id,
        "organizationId": row.organization_id,
        "email": row.email,
        "name": row.name,
        "role": row.role,
        "createdAt": row.created_at,
    }


def api_key(key: ApiKey) -> dict[str, Any]:
    """Never the hash: name, role, user, prefix, status and timestamps only."""
    return {
        "id": key.id,
        "name": key.name,
        "role": key.role,
        "userId": key.user_id,
        "prefix": f"dps_{key.key_id}",
        "status": key.status,
        "kind": key.kind,  # integration, or console: a signed-in person's credential (it expires)
        "expiresAt": key.expires_at,
        "createdAt": key.created_at,
        "lastUsedAt": key.last_used_at,
        "rotatedAt": key.rotated_at,
        "revokedAt": key.revoked_at,
    }


def issued_key(key: IssuedKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "name": key.name,
        "role": key.role,
        "userId": key.user_id,
        "prefix": key.key_prefix,
        "key": key.secret,
    }


class Output:
    def __init__(self, as_json: bool, out: TextIO | None = None, err: TextIO | None = None):
        self.as_json = as_json
        self._out = out or sys.stdout
        self._err = err or sys.stderr

    def record(self, title: str, record: dict[str, Any]) -> None:
        if self.as_json:
            self._json(record)
            return
        print(title, file=self._out)
        width = max(len(name) for name in record)
        for name, value in record.items():
            print(f"  {name.ljust(width)}  {_text(value)}", file=self._out)

    def table(self, collection: str, records: Sequence[dict[str, Any]], columns: Sequence[str]) -> None:
        if self.as_json:
            self._json({collection: list(records)})
            return
        rows = [[_text(record[c]) for c in columns] for record in records]
        widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(columns)]
        for line in [list(columns), *rows]:
            print("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip(), file=self._out)
        if not rows:
            print(f"(no {collection})", file=self._out)

    def message(self, text: str) -> None:
        """A confirmation for people; in ``--json`` mode the caller emits a record instead."""
        print(text, file=self._out)

    def warn(self, text: str) -> None:
        print(text, file=self._err)

    def _json(self, value: Any) -> None:
        print(json.dumps(value, default=_json_default, indent=2), file=self._out)


def _json_default(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    return str(value)
