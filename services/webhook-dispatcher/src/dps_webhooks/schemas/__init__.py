"""Request and response bodies of the dispatcher's API, and the two base models they share.

Request models validate bodies (``dps_common.http.bodies.parse_body``; the resources turn them into
the domain's commands); response models document the answers in the OpenAPI document; the
``render_*`` functions beside them are the only place that writes an answer, from the domain's views.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RequestModel(BaseModel):
    """Unknown fields are dropped silently (spec section 4); types are checked strictly."""

    model_config = ConfigDict(extra="ignore", strict=True)


class ResponseModel(BaseModel):
    """Documentation of a response. Clients must ignore fields they do not know (spec section 9)."""

    model_config = ConfigDict(extra="allow")
