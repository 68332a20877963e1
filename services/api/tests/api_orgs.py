"""Test organizations with a key of each role, and the settings console's side of the api: its
service token, signing a person in through ``/internal/v1/console/credentials`` as the console does,
and the key row behind a credential (a module of its own: ``conftest`` is not importable by name
when the contract suite's conftest runs in the same session)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

import falcon.testing
from sqlalchemy import select

from dps_common.db import Transactions

from dps_api.db.models.identity import ApiKey
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


# --- the settings console ---------------------------------------------------------------------

TOKEN = "console-token-0123456789abcdef0123456789abcdef"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
INTERNAL = "/internal/v1/console"
API = "/external/v1"


@dataclass
class Console:
    """A person signed in to the console: the credential it calls the services with."""

    credential: str
    key_id: str
    answer: dict[str, Any]

    @property
    def headers(self) -> dict[str, str]:
        return {"x-api-key": self.credential}


def sign_in(client: falcon.testing.TestClient, email: str) -> Console:
    resp = client.simulate_post(f"{INTERNAL}/credentials", json={"email": email, "sessionId": str(uuid4())}, headers=BEARER)
    assert resp.status_code == 201, resp.text
    return Console(resp.json["credential"], resp.json["keyId"], resp.json)


def key_row_id(tx: Transactions, key_id: str) -> UUID:
    """The row of a key, by its public key id (``dps_<keyid>_...``)."""
    with tx() as session:
        row_id = session.scalar(select(ApiKey.id).where(ApiKey.key_id == key_id))
    assert row_id is not None
    return row_id


def key_id_of(key: str) -> str:
    return key.split("_")[1]
