"""``/approval-groups``: named sets of approvers; every key reads them, admin keys edit them."""

from typing import Any
from uuid import UUID

import falcon

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging
from dps_common.paging import PageRequest

from dps_api.domain.approval_config_commands import ApprovalGroupChanges, NewApprovalGroup
from dps_api.domain.approval_config_views import ApprovalGroupView
from dps_api.resources.collection import CollectionResource, ItemResource
from dps_api.resources.context import AppContext
from dps_api.schemas.approval_config import (
    ApprovalGroup,
    ApprovalGroupCreate,
    ApprovalGroupList,
    ApprovalGroupUpdate,
    render_approval_group,
)
from dps_api.schemas.common import patch
from dps_api.services.approval_config import ApprovalConfigService

TAG = "Approval configuration"
PAGING = Paging(default=100, maximum=500, items_property="approvalGroups")
WHAT = "Approval group"


def new_group(body: ApprovalGroupCreate) -> NewApprovalGroup:
    return NewApprovalGroup(body.name, body.memberUserIds, body.requiredApprovals)


def group_changes(body: ApprovalGroupUpdate) -> ApprovalGroupChanges:
    return ApprovalGroupChanges(patch(body.name), patch(body.memberUserIds), patch(body.requiredApprovals))


class ApprovalGroupsResource(CollectionResource[ApprovalConfigService, ApprovalGroupView]):
    operations = {
        "GET": Operation(
            summary="List approval groups (stable order).",
            scope=Scope.APPROVAL_GROUPS_READ,
            response=ApprovalGroupList,
            paging=PAGING,
            tag=TAG,
            operation_id="listApprovalGroups",
        ),
        "POST": Operation(
            summary="Create an approval group.",
            scope=Scope.APPROVAL_CONFIG_WRITE,
            response=ApprovalGroup,
            body=ApprovalGroupCreate,
            status=201,
            tag=TAG,
            description="400 names the field when a member is not a user of the organization, is listed twice, "
            "or requiredApprovals exceeds the number of members.",
            operation_id="createApprovalGroup",
        ),
    }

    paging = PAGING

    def list_page(self, principal: Principal, page: PageRequest, **filters: bool | None) -> list[ApprovalGroupView]:
        return self._service.list_groups(principal, page)

    def create(self, principal: Principal, req: falcon.Request) -> ApprovalGroupView:
        return self._service.create_group(principal, new_group(parse_body(req, ApprovalGroupCreate)))

    def render(self, view: ApprovalGroupView) -> dict[str, Any]:
        return render_approval_group(view)


class ApprovalGroupResource(ItemResource[ApprovalConfigService, ApprovalGroupView]):
    operations = {
        "GET": Operation(
            summary="Get an approval group.",
            scope=Scope.APPROVAL_GROUPS_READ,
            response=ApprovalGroup,
            tag=TAG,
            operation_id="getApprovalGroup",
        ),
        "PATCH": Operation(
            summary="Update an approval group; only the fields sent change.",
            scope=Scope.APPROVAL_CONFIG_WRITE,
            response=ApprovalGroup,
            body=ApprovalGroupUpdate,
            tag=TAG,
            description="memberUserIds replaces the membership. Approval requests already submitted keep the "
            "membership and requiredApprovals they were submitted with.",
            operation_id="updateApprovalGroup",
        ),
    }

    what = WHAT

    def get(self, principal: Principal, target: UUID) -> ApprovalGroupView:
        return self._service.get_group(principal, target)

    def update(self, principal: Principal, target: UUID, req: falcon.Request) -> ApprovalGroupView:
        return self._service.update_group(principal, target, group_changes(parse_body(req, ApprovalGroupUpdate)))

    def render(self, view: ApprovalGroupView) -> dict[str, Any]:
        return render_approval_group(view)


def register(api: Api, ctx: AppContext) -> None:
    service = ApprovalConfigService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/approval-groups", ApprovalGroupsResource(service, ctx.cursors))
    api.add("/approval-groups/{group_id}", ApprovalGroupResource(service))
