"""Every request the stand-in answered (or dropped), so tests can assert exact bodies."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .forms import FormTree


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    raw_body: bytes
    form: FormTree | None  # the parsed body (query for GET), dicts and lists; None when it did not parse
    status: int | None  # None: the connection was dropped without an answer
    response: Any  # the answer's JSON, or its text
    response_headers: dict[str, str] = field(default_factory=dict)
    request_id: str = ""
    at: float = 0.0
    duration: float = 0.0
    account: str | None = None  # the connected account the call acted on

    @property
    def dropped(self) -> bool:
        return self.status is None

    @property
    def replayed(self) -> bool:
        return self.response_headers.get("Idempotent-Replayed") == "true"

    @property
    def idempotency_key(self) -> str | None:
        return next((v for k, v in self.headers.items() if k.lower() == "idempotency-key"), None)


class Recorder:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []

    def add(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def find(
        self, path: str | None = None, path_prefix: str | None = None, method: str | None = None
    ) -> list[RecordedRequest]:
        with self._lock:
            return [
                r
                for r in self._requests
                if (path is None or r.path == path)
                and (path_prefix is None or r.path.startswith(path_prefix))
                and (method is None or r.method == method.upper())
            ]

    def clear(self) -> None:
        with self._lock:
            self._requests.clear()
