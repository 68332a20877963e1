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
    # a console credential (the settings console acting as the signed-in person), not an integration key
    console: bool = False
    api_key_access: bool = False  # the person was granted API-key access by an admin

    @property
    def scopes(self) -> frozenset[Scope]:
        if self.manages_api_keys:
            return ROLE_SCOPES[self.role] | {Scope.API_KEYS_MANAGE}
        return ROLE_SCOPES[self.role]

    @property
    def manages_api_keys(self) -> bool:
        """``api-keys:manage``, in no role's set: a console credential of an admin, or of a person
        with API-key access. An integration key never has it, even an admin's."""
        return self.console and (self.role is Role.ADMIN or self.api_key_access)

    def has(self, scope: Scope) -> bool:
        if scope is Scope.API_KEYS_MANAGE:
            return self.manages_api_keys
        return scope in ROLE_SCOPES[self.role]
