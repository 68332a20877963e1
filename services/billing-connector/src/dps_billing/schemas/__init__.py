"""Response bodies of the connector's API, for the OpenAPI document (the answers themselves are
rendered from rows to dicts). Clients must ignore fields they do not know (spec section 9)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ResponseModel(BaseModel):
    model_config = ConfigDict(extra="allow")
