"""Who may manage which API keys (the settings console's rules), and the views its use cases answer.

A person acts through a console credential with their own role. An admin manages every integration
key of the organization, issuing keys of any role acting as any of its users. A person granted
API-key access manages their own keys only, never above their own role: they may not issue, nor
rotate (which hands out a new secret), a key whose role is higher than theirs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from dps_common.auth.scopes import Role

_RANK = {Role.VIEW_ONLY: 0, Role.USER: 1, Role.ADMIN: 2}


def role_within(role: Role, own: Role) -> bool:
    """Whether a key of ``role`` grants no more than a person of role ``own`` holds."""
    return _RANK[role] <= _RANK[own]


@dataclass(frozen=True)
class ApiKeyView:
    """An integration key as the console lists it: never its secret nor its hash."""

    id: UUID
    name: str
    role: Role
    user_id: UUID
    user_name: str
    key_id: str  # the public part: ``dps_<key_id>`` is the prefix shown
    status: str
    created_at: datetime
    last_used_at: datetime | None
    rotated_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True)
class IssuedApiKey:
    """A key as issued or rotated: ``secret`` is the full key string, in this answer only."""

    key: ApiKeyView
    secret: str


@dataclass(frozen=True)
class PersonView:
    id: UUID
    email: str
    name: str
    role: Role
    api_key_access: bool


@dataclass(frozen=True)
class SignedInPerson:
    """The person a console credential acts as, with their organization."""

    person: PersonView
    organization_id: UUID
    organization_name: str


@dataclass(frozen=True)
class ConsoleCredential:
    """A console credential as issued: ``credential`` is the full key string, in this answer only."""

    credential: str
    key_id: str
    expires_at: datetime
    signed_in: SignedInPerson
