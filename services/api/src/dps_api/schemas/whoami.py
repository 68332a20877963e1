"""The response of ``/whoami``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from dps_common.auth.principal import Principal

from dps_api.schemas.common import ResponseModel


class OrganizationRef(BaseModel):
    id: str
    name: str


class Whoami(ResponseModel):
    organization: OrganizationRef


def render_whoami(principal: Principal) -> dict[str, Any]:
    """The organization the key acts for (``Whoami``) and nothing else."""
    return {"organization": {"id": str(principal.organization_id), "name": principal.organization_name}}
