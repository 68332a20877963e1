"""Tests' check that an event written matches its service's catalogue: a declared type, the envelope,
and ``data`` valid under the schema the OpenAPI document publishes for it."""

from __future__ import annotations

from typing import Any

import jsonschema_rs

from dps_common.events.catalogue import EventCatalogue
from dps_common.openapi.events import ENVELOPE_FIELDS


def assert_documented_event(catalogue: EventCatalogue, envelope: dict[str, Any]) -> None:
    event = catalogue[envelope["type"]]
    assert set(ENVELOPE_FIELDS) <= set(envelope), sorted(envelope)
    schema = event.data.model_json_schema(mode="serialization")
    errors = [error.message for error in jsonschema_rs.validator_for(schema).iter_errors(envelope["data"])]
    assert not errors, (event.name, errors)
