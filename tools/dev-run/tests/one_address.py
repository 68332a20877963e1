"""What the one-address test asks of a running ``make run``: every operation of the merged document,
called through the proxy, answered by the service that owns it (its own document says which), as
that service answers it directly; and the answers of the services it must not reach, to tell them
apart. The services behind the proxy are found by the run's port variables (``make_run.PORTS``)."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

ID = "0193e6b2-7c1a-7def-8000-000000000001"  # in every path parameter: no such object anywhere
BEHIND = {"api": "API_PORT", "webhooks": "WEBHOOKS_PORT", "billing": "BILLING_PORT"}
METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes

    def shape(self) -> tuple[Any, ...]:
        """What identifies who answered: the status, the media type and, for a problem document, its
        type, title and detail (a route the service lacks: falcon's "404 Not Found"; an object it
        lacks: "Pricing quote not found."); for anything else its fields' names or, HTML, its title."""
        media = self.content_type.split(";")[0]
        if media.endswith("json"):
            document = json.loads(self.body)
            if media == "application/problem+json":
                return self.status, media, document["type"], document["title"], document["detail"]
            return self.status, media, tuple(sorted(document)) if isinstance(document, dict) else type(document).__name__
        title = re.search(rb"<title>(.*?)</title>", self.body)
        return self.status, media, title.group(1).decode() if title else self.body[:200]


def call(base: str, method: str, path: str, key: str) -> Answer:
    """One request with the key (a JSON ``{}`` body where the method takes one); a 429 is waited out."""
    for _ in range(20):
        request = urllib.request.Request(
            base + path, method=method, headers={"x-api-key": key, "content-type": "application/json"},
            data=b"{}" if method in ("POST", "PUT", "PATCH") else None,
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:
                result = Answer(answer.status, answer.headers.get("content-type", ""), answer.read())
        except urllib.error.HTTPError as error:
            result = Answer(error.code, error.headers.get("content-type", ""), error.read())
            if error.code == 429:  # the organization's budget (per process here): its window is a second
                time.sleep(0.5)
                continue
        return result
    raise AssertionError(f"{method} {path}: still 429 after 20 tries")


def document(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=30) as answer:
        found: dict[str, Any] = json.load(answer)
        return found


def operations(merged: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(the document's path, METHOD, the concrete path under /external/v1) of every operation."""
    return [(path, method.upper(), "/external/v1" + re.sub(r"\{[^}]+\}", ID, path))
            for path, item in merged["paths"].items() for method in item if method in METHODS]
