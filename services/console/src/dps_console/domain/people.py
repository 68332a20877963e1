"""The signed-in person as the api described them at sign-in, and what the console shows them
(design: "Who may do what"). The services decide; this only picks the pages and links offered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ADMIN = "admin"
ROLES = ("admin", "user", "view only")


@dataclass(frozen=True)
class Person:
    user_id: str
    email: str
    name: str
    role: str
    api_key_access: bool
    organization_id: str
    organization_name: str

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Person":
        return cls(
            user_id=str(data.get("userId", "")),
            email=str(data.get("email", "")),
            name=str(data.get("name", "")),
            role=str(data.get("role", "")),
            api_key_access=bool(data.get("apiKeyAccess", False)),
            organization_id=str(data.get("organizationId", "")),
            organization_name=str(data.get("organizationName", "")),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "userId": self.user_id, "email": self.email, "name": self.name, "role": self.role,
            "apiKeyAccess": self.api_key_access, "organizationId": self.organization_id,
            "organizationName": self.organization_name,
        }

    @property
    def is_admin(self) -> bool:
        return self.role == ADMIN

    @property
    def manages_keys(self) -> bool:
        return self.is_admin or self.api_key_access

    def roles_offered(self) -> tuple[str, ...]:
        """Roles a key may be issued with: none higher than the person's own."""
        if self.role not in ROLES:
            return ()
        return ROLES[ROLES.index(self.role):]

    def sections(self) -> tuple[str, ...]:
        """The console's sections this person has a use for, in the navigation's order."""
        shown: list[str] = []
        if self.manages_keys:
            shown.append("keys")
        if self.is_admin:
            shown += ["team", "webhooks", "billing"]
        elif self.api_key_access:
            shown.append("pushes")
        return tuple(shown)
