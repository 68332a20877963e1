"""Request and response bodies of ``/api-keys`` and ``/people`` (the settings console's operations)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any
from uuid import UUID

from pydantic import ConfigDict, Field, StringConstraints

from dps_common.auth.scopes import Role
from dps_common.openapi.examples import example

from dps_api.domain.key_access import ApiKeyView, IssuedApiKey, PersonView
from dps_api.schemas.common import RequestModel, ResponseModel

KeyName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=100, strip_whitespace=True, pattern=r"^[^\x00]*$"),
    Field(description="What the key is for, e.g. the integration that holds it (1 to 100 characters)."),
]
_USER_ID = "0192a3b4-c5d6-7e8f-9a0b-2c2d3e4f5a6b"
_KEY = {
    "id": "0192a3b4-c5d6-7e8f-9a0b-8c2d3e4f5a6b",
    "name": "Salesforce sync",
    "role": "user",
    "userId": _USER_ID,
    "userName": "Sam Seller",
    "prefix": "dps_he7pokmZ5sGV",
    "status": "active",
    "createdAt": "2026-03-02T09:15:00Z",
    "lastUsedAt": "2026-03-05T17:42:10Z",
    "rotatedAt": None,
    "revokedAt": None,
}
_SECRET = "dps_he7pokmZ5sGV_q3Zy8VwD1mT0bXkR4nLs9cPjH2aGfE6uYoWi7tNe5Bd"
_PERSON = {
    "id": _USER_ID,
    "email": "sam.seller@demo-sales.example",
    "name": "Sam Seller",
    "role": "user",
    "apiKeyAccess": True,
}


def _response_example(body: dict[str, Any]) -> ConfigDict:
    return ConfigDict(extra="allow", json_schema_extra={"examples": [body]})


class ApiKeyCreate(RequestModel):
    model_config = example({"name": "Salesforce sync", "role": "user", "userId": _USER_ID})

    name: KeyName
    role: Role = Field(description="At most the caller's own role (else 403 `role_too_high`).")
    userId: UUID | None = Field(
        default=None,
        description="The user the key acts as; default the caller. Only an admin may name another user "
        "of the organization.",
    )


class ApiKey(ResponseModel):
    model_config = _response_example(_KEY)

    id: str
    name: str
    role: Role
    userId: str = Field(description="The user the key acts as.")
    userName: str
    prefix: str = Field(description="`dps_<keyid>`: the key's public part, as it starts every request's key.")
    status: str = Field(description="`active` or `revoked`.", json_schema_extra={"enum": ["active", "revoked"]})
    createdAt: datetime
    lastUsedAt: datetime | None
    rotatedAt: datetime | None
    revokedAt: datetime | None


class ApiKeyWithSecret(ApiKey):
    model_config = _response_example({**_KEY, "secret": _SECRET})

    secret: str = Field(description="The whole key, `dps_<keyid>_<secret>`: shown in this answer only, never again.")


class ApiKeyList(ResponseModel):
    model_config = _response_example({"apiKeys": [_KEY], "nextCursor": None})

    apiKeys: list[ApiKey]
    nextCursor: str | None


class Person(ResponseModel):
    model_config = _response_example(_PERSON)

    id: str
    email: str
    name: str
    role: Role
    apiKeyAccess: bool = Field(description="Granted by an admin: the person manages their own API keys. Admins always may.")


class PersonList(ResponseModel):
    model_config = _response_example({"people": [_PERSON], "nextCursor": None})

    people: list[Person]
    nextCursor: str | None


class ApiKeyAccessUpdate(RequestModel):
    model_config = example({"granted": True})

    granted: bool


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


def render_api_key(key: ApiKeyView) -> dict[str, Any]:
    """An integration key as the API shows it (``ApiKey``): never its secret nor its hash."""
    return {
        "id": str(key.id),
        "name": key.name,
        "role": key.role.value,
        "userId": str(key.user_id),
        "userName": key.user_name,
        "prefix": f"dps_{key.key_id}",
        "status": key.status,
        "createdAt": _utc(key.created_at),
        "lastUsedAt": _utc(key.last_used_at),
        "rotatedAt": _utc(key.rotated_at),
        "revokedAt": _utc(key.revoked_at),
    }


def render_issued_key(issued: IssuedApiKey) -> dict[str, Any]:
    """``ApiKeyWithSecret``: the key and, this once, its whole value."""
    return {**render_api_key(issued.key), "secret": issued.secret}


def render_person(person: PersonView) -> dict[str, Any]:
    return {
        "id": str(person.id),
        "email": person.email,
        "name": person.name,
        "role": person.role.value,
        "apiKeyAccess": person.api_key_access,
    }
