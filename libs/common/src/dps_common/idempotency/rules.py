"""The rules of idempotent requests, as plain functions over plain values (no framework, no I/O):
what a valid key is, what makes two requests "the same", which answers are kept for replay.

They follow Stripe and the IETF draft "The Idempotency-Key HTTP Header Field"
(draft-ietf-httpapi-idempotency-key-header): a key names one request of one client (an API key of
an organization) for 24 hours; the same key with another request is 422, a retry while the first runs is 409."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import timedelta

import orjson

from dps_common.errors import BadRequest, Conflict, UnprocessableContent

KEY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"  # Stripe's name; "true" on every replayed answer
MAX_KEY_LENGTH = 255  # Stripe's limit
RETENTION = timedelta(hours=24)  # how long a key stays bound to its request and answer
# How long an unfinished request holds its key: past it, the process is taken for dead and a retry
# runs the request again. Longer than any request may run (gunicorn's worker timeout is 30 s).
LEASE = timedelta(seconds=60)
# Headers of the first answer that a replay repeats (the request id too, as Stripe does: a replay
# is the original answer, and its id finds the original request in the logs).
KEPT_HEADERS = ("Content-Type", "Location", "X-Request-Id")
# Answers a retry should not see replayed, as nothing was done and a retry may fare otherwise:
# refused before execution (key, scope, rate, size, media type), a conflict with the current state
# (a retry re-reads it), and server errors (each use case is one transaction, so a 5xx left nothing
# behind). Every other answer (2xx, and 4xx from the operation's own rules: 400, 404) is kept.
_NOT_KEPT_4XX = frozenset({401, 403, 408, 409, 413, 415, 429})


def valid_key(value: str) -> str:
    """The key as given, if it is 1 to 255 printable ASCII characters; else 400."""
    if not 1 <= len(value) <= MAX_KEY_LENGTH or not all(" " <= char <= "~" for char in value):
        raise BadRequest(
            f"{KEY_HEADER} must be 1 to {MAX_KEY_LENGTH} printable ASCII characters.",
            code="invalid_idempotency_key",
        )
    return value


def body_fingerprint(body: bytes) -> str:
    """SHA-256 (hex) of the body in canonical form: JSON re-serialized with sorted keys and no
    spaces, so key order and whitespace do not make two requests differ; an empty body counts as
    ``{}`` (how the services read it). A body that is not JSON (or beyond what orjson parses) is
    hashed as sent."""
    stripped = body.strip()
    if not stripped:
        canonical = b"{}"
    else:
        try:
            canonical = orjson.dumps(orjson.loads(stripped), option=orjson.OPT_SORT_KEYS)
        except orjson.JSONDecodeError:
            canonical = body
    return hashlib.sha256(canonical).hexdigest()


@dataclass(frozen=True, slots=True)
class RequestSignature:
    """What must match for a retry to be the same request."""

    method: str
    path: str  # with the query string, if any
    fingerprint: str


@dataclass(frozen=True, slots=True)
class StoredResponse:
    status: int
    headers: dict[str, str]
    body: bytes


def is_kept(status: int) -> bool:
    """Whether an answer with ``status`` is stored and replayed for the key's retries."""
    return status < 500 and status not in _NOT_KEPT_4XX


def same_request(stored: RequestSignature, retry: RequestSignature) -> None:
    """Nothing when ``retry`` is the stored request again; else 422 saying what differs."""
    if (stored.method, stored.path) != (retry.method, retry.path):
        raise key_reused(f"{stored.method} {stored.path}")
    if stored.fingerprint != retry.fingerprint:
        raise key_reused("another request body")


def key_reused(what: str) -> UnprocessableContent:
    return UnprocessableContent(
        f"This {KEY_HEADER} was already used with {what} in the last 24 hours; "
        "use a new key for a new request.",
        code="idempotency_key_reused",
    )


def in_progress() -> Conflict:
    return Conflict(
        f"A request with this {KEY_HEADER} is still being processed; retry after it completes.",
        code="idempotency_key_in_use",
    )
