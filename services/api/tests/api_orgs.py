"""Test organizations with a key of each role (a module of its own: ``conftest`` is not importable
by name when the contract suite's conftest runs in the same session)."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from dps_api.services.identity import IdentityService


@dataclass
class Member:
    user_id: UUID
    key: str
    key_row_id: UUID

    @property
    def headers(self) -> dict[str, str]:
        return {"x-api-key": self.key}


@dataclass
class Org:
    id: UUID
    name: str
    admin: Member
    user: Member
    viewer: Member
    identity: IdentityService

    def member(self, role: str, email: str) -> Member:
        """Another user of this organization with a key of ``role``."""
        user = self.identity.create_user(self.id, email, email.split("@")[0], role)
        key = self.identity.issue_key(self.id, user.id, role, f"{email} key")
        return Member(user.id, key.secret, key.id)


def make_org(identity: IdentityService, name: str) -> Org:
    org = identity.create_organization(name)
    slug = name.lower().replace(" ", "-")
    members = {}
    for role, label in (("admin", "admin"), ("user", "user"), ("view only", "viewer")):
        user = identity.create_user(org.id, f"{label}@{slug}.example", label.title(), role)
        key = identity.issue_key(org.id, user.id, role, f"{label} integration")
        members[label] = Member(user.id, key.secret, key.id)
    return Org(org.id, org.name, members["admin"], members["user"], members["viewer"], identity)
