"""What the console's API-key use cases are asked to do (plain values, no request bodies; resources
build them from request bodies), and the refusal of a key above the caller's own role
(``dps_api.domain.key_access.role_within`` says which).
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from dps_common.auth.scopes import Role
from dps_common.errors import Forbidden


@dataclass(frozen=True)
class NewApiKey:
    name: str
    role: Role
    user_id: UUID | None = None  # None: the caller


def role_too_high(role: Role, own: Role, action: str) -> Forbidden:
    message = f"must be no higher than your own role ({own.value})"
    return Forbidden(
        f"You may not {action} a key of role '{role.value}': a key's role is at most your own ({own.value}).",
        code="role_too_high",
        extra={"errors": [{"field": "role", "message": message}]},
    )
