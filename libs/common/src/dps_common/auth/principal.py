"""Who is asking: the organization, user, role and scopes an API key resolves to."""

from dataclasses import dataclass
from uuid import UUID

from dps_common.auth.scopes import ROLE_SCOPES, Role, Scope


@dataclass(frozen=True, slots=True)
class Principal:
    organization_id: UUID
    organization_name: str
    user_id: UUID
    role: Role
    key_id: str

    @property
    def scopes(self) -> frozenset[Scope]:
        return ROLE_SCOPES[self.role]

    def has(self, scope: Scope) -> bool:
        return scope in ROLE_SCOPES[self.role]
