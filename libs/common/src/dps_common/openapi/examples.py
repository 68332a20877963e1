"""Examples of request bodies and answers in the OpenAPI document, declared on the models themselves.

``model_config = example({...})`` in a request model puts the body under the schema's ``examples``
(JSON Schema 2020-12, which OpenAPI 3.1 uses); pydantic merges it with the base model's
configuration. Each service's tests validate every example against its model, so none drifts."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, WithJsonSchema


def example(body: dict[str, Any]) -> ConfigDict:
    return ConfigDict(json_schema_extra={"examples": [body]})


# A decimal number written as a string in an answer ("1234.50"): ``format: decimal`` tells a reader
# and a client generator it is a number, kept exact, not text (``amount: DecimalText | None``).
DecimalText = Annotated[str, WithJsonSchema({"type": "string", "format": "decimal", "examples": ["1234.50"]})]
