"""Request and response bodies of ``/internal/v1/key-introspection``: the key another service was
presented, and what it says of it (the wire format is ``dps_common.auth.introspection``'s, which the
other services read)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from dps_common.auth.introspection import principal_to_json
from dps_common.auth.principal import Principal


class IntrospectionRequest(BaseModel):
    key: str


def render_active_key(principal: Principal, expires_at: datetime | None) -> dict[str, Any]:
    return principal_to_json(principal, expires_at)


def render_inactive_key() -> dict[str, Any]:
    return {"active": False}
