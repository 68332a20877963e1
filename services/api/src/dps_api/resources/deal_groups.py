"""``/deal-groups``: the spec's bounded lookup by opportunity, read, and the admin's create and update."""

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, QueryParam
from dps_common.http.params import invalid_param, path_id, query_uuid

from dps_api.domain.deal_group_commands import DealGroupChanges, NewDealGroup
from dps_api.resources.context import AppContext
from dps_api.schemas.common import patch
from dps_api.schemas.deal_groups import (
    MAX_GROUPS_PER_OPPORTUNITY,
    DealGroup,
    DealGroupCreate,
    DealGroupList,
    DealGroupUpdate,
    render_deal_group,
    render_deal_group_list,
)
from dps_api.services.deal_groups import DealGroupService

TAG = "Deal groups"
LIMITS = (
    f"409 `deal_group_limit_reached` when an opportunity would belong to more than "
    f"{MAX_GROUPS_PER_OPPORTUNITY} deal groups; 400 naming opportunityIds for an id that is not an "
    "opportunity of the organization."
)


def new_deal_group(body: DealGroupCreate) -> NewDealGroup:
    return NewDealGroup(body.name, body.description, body.opportunityIds)


def deal_group_changes(body: DealGroupUpdate) -> DealGroupChanges:
    return DealGroupChanges(patch(body.name), patch(body.description), patch(body.opportunityIds))


class DealGroupsResource:
    operations = {
        "GET": Operation(
            summary="The deal groups an opportunity belongs to (a bounded lookup, no paging).",
            scope=Scope.DEAL_GROUPS_READ,
            response=DealGroupList,
            query=(
                QueryParam(
                    "opportunityId",
                    {"type": "string", "format": "uuid"},
                    "The opportunity whose deal groups are returned.",
                    required=True,
                ),
            ),
            errors=(404,),
            tag=TAG,
            description=(
                f"At most {MAX_GROUPS_PER_OPPORTUNITY} groups, ordered by id. 400 when opportunityId is "
                "missing or not a UUID; 404 when it names no opportunity of the organization."
            ),
            operation_id="listDealGroupsOfOpportunity",
        ),
        "POST": Operation(
            summary="Create a deal group.",
            scope=Scope.DEAL_GROUPS_WRITE,
            response=DealGroup,
            body=DealGroupCreate,
            status=201,
            errors=(409,),
            tag=TAG,
            description=LIMITS,
            operation_id="createDealGroup",
        ),
    }

    def __init__(self, service: DealGroupService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        opportunity_id = query_uuid(req, "opportunityId")
        if opportunity_id is None:
            raise invalid_param("opportunityId", "query parameter is required")
        groups = self._service.groups_of(req.context.principal, opportunity_id)
        resp.media = render_deal_group_list(groups)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        command = new_deal_group(parse_body(req, DealGroupCreate))
        resp.media = render_deal_group(self._service.create(req.context.principal, command))
        resp.status = falcon.HTTP_201


class DealGroupResource:
    operations = {
        "GET": Operation(
            summary="Get a deal group.",
            scope=Scope.DEAL_GROUPS_READ,
            response=DealGroup,
            tag=TAG,
            operation_id="getDealGroup",
        ),
        "PATCH": Operation(
            summary="Update a deal group; only the fields sent change, opportunityIds replaces the membership.",
            scope=Scope.DEAL_GROUPS_WRITE,
            response=DealGroup,
            body=DealGroupUpdate,
            errors=(409,),
            tag=TAG,
            description=LIMITS,
            operation_id="updateDealGroup",
        ),
    }

    def __init__(self, service: DealGroupService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, deal_group_id: str) -> None:
        group = self._service.get(req.context.principal, path_id(deal_group_id, "Deal group"))
        resp.media = render_deal_group(group)

    def on_patch(self, req: falcon.Request, resp: falcon.Response, deal_group_id: str) -> None:
        target = path_id(deal_group_id, "Deal group")
        command = deal_group_changes(parse_body(req, DealGroupUpdate))
        resp.media = render_deal_group(self._service.update(req.context.principal, target, command))


def register(api: Api, ctx: AppContext) -> None:
    service = DealGroupService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/deal-groups", DealGroupsResource(service))
    api.add("/deal-groups/{deal_group_id}", DealGroupResource(service))
