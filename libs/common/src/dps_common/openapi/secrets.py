"""The OpenAPI side of secrets shown once (``dps_common.idempotency.redaction``): an operation with
``secret_fields`` documents that a replay of its answer (``Idempotent-Replayed: true``) carries each
secret as null beside a ``secretShownOnce`` notice. Its success answer is one of two schemas: the
model (the first answer, secret included) and ``{Model}Replayed`` (the replay)."""

from __future__ import annotations

import copy
from typing import Any

from dps_common.http.operations import Operation
from dps_common.idempotency.redaction import NOTICE_FIELD, NOTICE_SCHEMA

_REF = "#/components/schemas/{model}"
NOTICE_MODEL = "SecretShownOnce"


def _replay_text(op: Operation) -> str:
    named = ", ".join(f"`{name}`" for name in op.secret_fields)
    renewal = f" To get a new secret: `{op.secret_renewal}`." if op.secret_renewal else ""
    return (
        f"The secret ({named}) is shown once, in this answer: store it now. It is never kept, not even for "
        f"an Idempotency-Key: a replay of this answer (`Idempotent-Replayed: true`) carries it as null, with "
        f"`{NOTICE_FIELD}` saying so.{renewal}"
    )


def document_secret_replay(doc: dict[str, Any], op: Operation) -> None:
    """The operation's description and success answer say how a replay carries its secret."""
    if not op.secret_fields or op.response is None:
        return
    text = _replay_text(op)
    doc["description"] = f"{doc['description']} {text}" if doc.get("description") else text
    ok = doc["responses"][str(op.status)]
    ok["description"] = f"{ok['description']} A replay carries the secret as null ({op.response.__name__}Replayed)."
    ok["content"]["application/json"]["schema"] = {
        "oneOf": [
            {"$ref": _REF.format(model=op.response.__name__)},
            {"$ref": _REF.format(model=f"{op.response.__name__}Replayed")},
        ]
    }


def add_replayed_schemas(schemas: dict[str, Any], operations: list[Operation]) -> None:
    """``{Model}Replayed`` for each model answered with a secret, and the notice's schema."""
    for op in operations:
        if not op.secret_fields or op.response is None:
            continue
        name = op.response.__name__
        replayed = copy.deepcopy(schemas[name])
        replayed["title"] = f"{replayed.get('title', name)} (replayed)"
        replayed["description"] = (
            "A replayed answer (`Idempotent-Replayed: true`): the secret was shown once, in the first answer, "
            f"and is null here; `{NOTICE_FIELD}` says how to get a new one."
        )
        replayed.pop("examples", None)
        properties = replayed.setdefault("properties", {})
        for field in op.secret_fields:
            properties[field] = {"type": "null", "description": "Shown once, in the first answer; null in a replay."}
        properties[NOTICE_FIELD] = {"$ref": _REF.format(model=NOTICE_MODEL)}
        replayed["required"] = sorted({*replayed.get("required", []), *op.secret_fields, NOTICE_FIELD})
        schemas[f"{name}Replayed"] = replayed
        schemas[NOTICE_MODEL] = NOTICE_SCHEMA
