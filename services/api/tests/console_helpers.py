"""The settings console's side of the api in tests: the service token, signing a person in through
``/internal/v1/console/credentials`` as the console does, and the key row behind a credential (a
module of its own: ``conftest`` is not importable by name)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

import falcon.testing
from sqlalchemy import select

from dps_common.db import Transactions

from dps_api.db.models.identity import ApiKey

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
