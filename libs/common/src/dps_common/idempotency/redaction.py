"""Secrets are shown once: the answer kept for an ``Idempotency-Key`` never holds one.

An operation whose answer carries a secret (a webhook signing secret, an API key) names its fields
(``Operation.secret_fields``, top-level fields of the JSON answer) and how to get a new secret
(``Operation.secret_renewal``, e.g. ``"POST /webhook-configs/{id}/rotate-secret"``, filled in from
the answer's own fields). The first answer goes to the client as it is; what is kept, and replayed,
is the answer with each secret field set to ``null`` and a notice beside them::

    "secret": null,
    "secretShownOnce": {
        "fields": ["secret"],
        "detail": "This is a replay of an answer that carried a secret: ...",
        "renewal": "POST /webhook-configs/wh_.../rotate-secret"
    }

Plain functions over bytes (no framework, no I/O)."""

from __future__ import annotations

from typing import Any

import orjson

NOTICE_FIELD = "secretShownOnce"


def redacted(body: bytes, fields: tuple[str, ...], renewal: str) -> bytes | None:
    """What may be kept of ``body``, an answer whose ``fields`` may hold a secret.

    ``body`` itself when it holds none of them (empty, or a JSON object where each is absent or
    null: an error answer, say); the object with each one set to null and the ``secretShownOnce``
    notice otherwise. ``None`` when the body is not a JSON object, so cannot be told free of a
    secret: such an answer is not kept at all."""
    if not body.strip():
        return body
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(answer, dict):
        return None
    shown = [name for name in fields if answer.get(name) is not None]
    if not shown:
        return body
    for name in shown:
        answer[name] = None
    answer[NOTICE_FIELD] = notice(shown, _filled(renewal, answer))
    return orjson.dumps(answer)


def notice(fields: list[str], renewal: str | None) -> dict[str, Any]:
    """The ``secretShownOnce`` object of a replayed answer (its schema: ``NOTICE_SCHEMA``)."""
    named = ", ".join(f"`{name}`" for name in fields)
    how = f" To get a new one: {renewal}." if renewal else " It cannot be shown again."
    return {
        "fields": fields,
        "detail": (
            f"This is a replay of an answer whose secret ({named}) was shown once, in the first answer, "
            f"and is not kept: here it is null.{how}"
        ),
        "renewal": renewal,
    }


NOTICE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "Only in a replayed answer (`Idempotent-Replayed: true`) of an operation that returns a secret: "
        "the secret was shown once, in the first answer, and is never kept, so the replay carries it as "
        "null. To get a new secret, call `renewal`."
    ),
    "properties": {
        "fields": {"type": "array", "items": {"type": "string"}, "description": "The fields set to null."},
        "detail": {"type": "string", "description": "What happened and what to do, for a person."},
        "renewal": {
            "type": ["string", "null"],
            "description": "The operation that issues a new secret (method and path), e.g. "
            "`POST /webhook-configs/wh_123/rotate-secret`; null when there is none.",
        },
    },
    "required": ["fields", "detail", "renewal"],
}


def _filled(renewal: str, answer: dict[str, Any]) -> str | None:
    """``renewal`` with ``{name}`` filled in from the answer's top-level fields (as it is when a
    placeholder is missing from the answer); ``None`` when there is no renewal."""
    if not renewal:
        return None
    values = {name: value for name, value in answer.items() if isinstance(value, str | int)}
    try:
        return renewal.format_map(values)
    except (KeyError, IndexError, ValueError):
        return renewal
