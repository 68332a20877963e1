"""The api's internal console operations (bearer CONSOLE_API_TOKEN): who may get a sign-in mail,
a console credential for a session, and its revocation."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from dps_console.adapters.backends import Backend
from dps_console.domain.people import Person
from dps_console.domain.problems import ServiceRefused, ServiceUnavailable

log = logging.getLogger("dps.console.credentials")

PREFIX = "/internal/v1/console"


@dataclass(frozen=True)
class Credential:
    secret: str
    key_id: str
    person: Person


class ConsoleCredentials:
    def __init__(self, internal: Backend, token: str):
        self._internal = internal
        self._token = token

    def is_candidate(self, email: str) -> bool:
        answer = self._call("POST", PREFIX + "/sign-in-candidates", {"email": email})
        return bool(isinstance(answer, dict) and answer.get("known") is True)

    def issue(self, email: str, session_id: str) -> Credential | None:
        """None when no active user has that email (any more)."""
        try:
            answer: dict[str, Any] = self._call("POST", PREFIX + "/credentials", {"email": email, "sessionId": session_id})
        except ServiceRefused as refused:
            if refused.problem.status == 404:
                return None
            raise
        return Credential(str(answer["credential"]), str(answer["keyId"]), Person.from_json(answer["person"]))

    def revoke(self, key_id: str) -> None:
        self._call("DELETE", f"{PREFIX}/credentials/{key_id}")

    def _call(self, method: str, path: str, body: dict[str, str] | None = None) -> Any:
        """A refusal of the console's own token (401, 403) is a misconfiguration, never a person's
        doing (it would otherwise read as an ended session): the api counts as unavailable."""
        try:
            return self._internal.call(method, path, json=body, bearer=self._token)
        except ServiceRefused as refused:
            if refused.problem.status in (401, 403):
                log.error("the api refused CONSOLE_API_TOKEN", extra={"status": refused.problem.status})
                raise ServiceUnavailable("api") from None
            raise
