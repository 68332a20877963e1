"""Request and response bodies of ``/internal/v1/console/*``: what the settings console sends (an
email; an email and its session id) and the answers it reads (whether a person is known; a console
credential with the signed-in person)."""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

from pydantic import BaseModel, ConfigDict, StringConstraints

from dps_api.domain.key_access import ConsoleCredential

Email = Annotated[str, StringConstraints(min_length=1, max_length=320, pattern=r"^[^\x00]*$")]


class SignInCandidateRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    email: Email


class CredentialRequest(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)
    email: Email
    sessionId: UUID


def render_sign_in_candidate(known: bool) -> dict[str, object]:
    return {"known": known}


def render_credential(issued: ConsoleCredential) -> dict[str, object]:
    person, signed_in = issued.signed_in.person, issued.signed_in
    return {
        "credential": issued.credential,
        "keyId": issued.key_id,
        "expiresAt": issued.expires_at,
        "person": {
            "userId": str(person.id),
            "email": person.email,
            "name": person.name,
            "role": person.role.value,
            "apiKeyAccess": person.api_key_access,
            "organizationId": str(signed_in.organization_id),
            "organizationName": signed_in.organization_name,
        },
    }
