"""Request and response bodies of the connector's API: the models parse requests and document the
answers in the OpenAPI document; the ``render_*`` functions beside them are the only place that
writes an answer (and an event's data), from the domain's views. Clients must ignore fields they do
not know (spec section 9)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ResponseModel(BaseModel):
    model_config = ConfigDict(extra="allow")
