"""Examples of request bodies in the OpenAPI document, declared on the request models themselves.

``model_config = example({...})`` in a request model puts the body under the schema's ``examples``
(JSON Schema 2020-12, which OpenAPI 3.1 uses); pydantic merges it with the base model's
configuration. Each service's tests validate every example against its model, so none drifts."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict


def example(body: dict[str, Any]) -> ConfigDict:
    return ConfigDict(json_schema_extra={"examples": [body]})
