from pydantic import BaseModel

from dps_api.schemas.common import ResponseModel


class OrganizationRef(BaseModel):
    id: str
    name: str


class Whoami(ResponseModel):
    organization: OrganizationRef
