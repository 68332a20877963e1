"""The ``webhooks`` section of an OpenAPI 3.1 document: every event type a service publishes, as the
request its customers' endpoints receive (the envelope, its ``data`` schema, the delivery headers)."""

from __future__ import annotations

from typing import Any

from pydantic.json_schema import models_json_schema

from dps_common.events.catalogue import EventCatalogue
from dps_common.openapi.components import PARAMETER_REF, as_in_document
from dps_common.openapi.merge import add_components

_REF = "#/components/schemas/{model}"
ENVELOPE = "EventEnvelope"
ENVELOPE_FIELDS = ("id", "type", "version", "occurredAt", "organizationId", "data")
_ENVELOPE_SCHEMA = {
    "type": "object",
    "description": "Every event delivered to a webhook endpoint. Receivers ignore fields they do not know.",
    "required": list(ENVELOPE_FIELDS),
    "properties": {
        "id": {"type": "string", "format": "uuid", "description": "The event id, as in X-Service-Event-Id: deduplicate by it."},
        "type": {"type": "string", "description": "The event type, e.g. quote.approved."},
        "version": {"type": "integer", "description": "The envelope's version."},
        "occurredAt": {"type": "string", "format": "date-time", "description": "When it happened: order by it, not by arrival."},
        "organizationId": {"type": "string", "format": "uuid"},
        "data": {"type": "object", "description": "The object as it stands after the change."},
    },
}
_HEADERS = [
    ("X-Service-Event-Id", "The event's id; stable across every retry and replay. Use it to deduplicate."),
    ("X-Service-Delivery-Id", "This delivery's id; changes per delivery. Not for deduplication."),
    ("X-Service-Attempt", "The attempt number, starting at 1."),
    ("webhook-id", "Standard Webhooks: the event id."),
    ("webhook-timestamp", "Standard Webhooks: seconds since the epoch when this attempt was signed."),
    ("webhook-signature", "Standard Webhooks: v1,<base64 HMAC-SHA256 of id.timestamp.body under the endpoint's secret>."),
]

_HEADER_PARAMETERS = {
    name: {"name": name, "in": "header", "required": True, "schema": {"type": "string"}, "description": text}
    for name, text in _HEADERS
}


def add_event_catalogue(document: dict[str, Any], catalogue: EventCatalogue) -> None:
    events = sorted(catalogue, key=lambda event: event.name)
    if not events:
        return
    models = sorted({event.data for event in events}, key=lambda model: model.__name__)
    _, defs = models_json_schema([(model, "serialization") for model in models], ref_template=_REF)
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    add_components(schemas, as_in_document(schemas, {**defs.get("$defs", {}), ENVELOPE: _ENVELOPE_SCHEMA}),
                   "schema of the event catalogue")
    document["components"]["schemas"] = dict(sorted(schemas.items()))
    add_components(document["components"].setdefault("parameters", {}), _HEADER_PARAMETERS, "delivery header")
    webhooks = document.setdefault("webhooks", {})
    for event in events:
        webhooks[event.name] = {
            "post": {
                "summary": event.summary,
                "operationId": "event_" + event.name.replace(".", "_"),
                "tags": ["Events"],
                "parameters": [{"$ref": PARAMETER_REF.format(name=name)} for name, _ in _HEADERS],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"allOf": [
                        {"$ref": _REF.format(model=ENVELOPE)},
                        {"type": "object", "properties": {
                            "type": {"const": event.name},
                            "data": {"$ref": _REF.format(model=event.data.__name__)},
                        }},
                    ]}}},
                },
                "responses": {"2XX": {"description": "Received. Any other answer, or none within 10 s, is retried."}},
            }
        }
