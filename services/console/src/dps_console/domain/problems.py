"""A service's RFC 9457 problem details, made into what a page shows: one message for the page and
messages per form field (``errors[].field``); and what a call to a service ends in when it does not
succeed (``ServiceRefused`` with its problem, ``ServiceUnavailable``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Problem:
    status: int
    code: str = ""
    title: str = ""
    detail: str = ""
    fields: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_body(cls, status: int, body: Any) -> "Problem":
        if not isinstance(body, dict):
            return cls(status, title=_default_title(status))
        fields: dict[str, list[str]] = {}
        for error in body.get("errors") or []:
            if isinstance(error, dict):
                name = _field_name(str(error.get("field") or ""))
                message = str(error.get("message") or error.get("detail") or error.get("code") or "is not valid")
                fields.setdefault(name, []).append(message)
        return cls(
            status,
            code=str(body.get("code") or ""),
            title=str(body.get("title") or _default_title(status)),
            detail=str(body.get("detail") or ""),
            fields=fields,
        )

    @property
    def message(self) -> str:
        return self.detail or self.title

    def unplaced(self, form_fields: tuple[str, ...]) -> list[str]:
        """Field messages for fields the form does not have (shown at the top of the form)."""
        return [f"{name}: {m}" if name else m for name, ms in self.fields.items() if name not in form_fields for m in ms]


class ServiceRefused(Exception):
    def __init__(self, service: str, problem: Problem):
        super().__init__(f"{service}: {problem.status} {problem.code}")
        self.service = service
        self.problem = problem


class ServiceUnavailable(Exception):
    def __init__(self, service: str):
        super().__init__(f"{service} did not answer")
        self.service = service


def _field_name(path: str) -> str:
    """``body.eventTypes[0]`` or ``/eventTypes/0`` -> ``eventTypes``."""
    name = path.removeprefix("body.").removeprefix("/").removeprefix("body/")
    for separator in ("[", ".", "/"):
        name = name.split(separator)[0]
    return name


def _default_title(status: int) -> str:
    return {400: "The request is not valid.", 401: "Not signed in.", 403: "Not allowed.",
            404: "Not found.", 409: "Conflict.", 422: "The request is not valid.",
            429: "Too many requests."}.get(status, "The service could not answer.")
