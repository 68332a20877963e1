"""The signed-in person as the api described them at sign-in, and what the console shows them
(design: "Who may do what"). The services decide; this only picks the pages and links offered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ADMIN = "admin"
VIEW_ONLY = "view only"
ROLES = ("admin", "user", "view only")
# what each part of the console needs (design: "Who may do what"); every URL of a part checks it
KEYS, TEAM, WEBHOOKS, BILLING, PUSHES = "keys", "team", "webhooks", "billing", "pushes"


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
        """Admins; others once granted access, except a view-only person (no API-key rights at all)."""
        return self.is_admin or (self.api_key_access and self.role != VIEW_ONLY)

    def may_use(self, part: str) -> bool:
        """Whether this person may open any page of ``part`` (else: a 403 page, no form)."""
        if part == KEYS:
            return self.manages_keys
        if part == PUSHES:
            return self.is_admin or self.manages_keys
        return self.is_admin  # team, webhooks, billing

    def refusal(self, part: str) -> str:
        """What a person who may not use ``part`` reads: what they cannot do here, and whom to ask."""
        what = {KEYS: "manage API keys", TEAM: "manage the team", WEBHOOKS: "manage webhooks",
                BILLING: "manage the billing integration", PUSHES: "see billing pushes"}.get(part, "do this")
        why = f"your role is {self.role}"
        if part in (KEYS, PUSHES) and self.role != VIEW_ONLY:
            why += " and an administrator has not granted you API-key access"
        elif part in (KEYS, PUSHES):
            why += ", which has no API-key rights"
        return f"You cannot {what} here: {why}. Ask an administrator of {self.organization_name or 'your organization'}."

    def roles_offered(self) -> tuple[str, ...]:
        """Roles a key may be issued with: none higher than the person's own."""
        if self.role not in ROLES:
            return ()
        return ROLES[ROLES.index(self.role):]

    def sections(self) -> tuple[str, ...]:
        """The console's sections this person has a use for, in the navigation's order."""
        shown: list[str] = []
        if self.manages_keys:
            shown.append(KEYS)
        if self.is_admin:
            shown += [TEAM, WEBHOOKS, BILLING]
        elif self.manages_keys:
            shown.append(PUSHES)
        return tuple(shown)
