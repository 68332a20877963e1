"""``/approval-groups``: named sets of approvers; every key reads them, admin keys edit them."""

from typing import Any

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging
from dps_common.http.paging import serve_page
from dps_common.http.params import path_id
from dps_common.paging import CursorCodec, PageRequest

from dps_api.adapters.outbox import OUTBOX
from dps_api.context import AppContext
from dps_api.domain.approval_config_commands import ApprovalGroupChanges, NewApprovalGroup
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


class ApprovalGroupsResource:
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

    def __init__(self, service: ApprovalConfigService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        principal = req.context.principal

        def fetch(page: PageRequest) -> list[dict[str, Any]]:
            return [render_approval_group(g) for g in self._service.list_groups(principal, page)]

        resp.media = serve_page(req, PAGING, self._cursors, fetch)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        command = new_group(parse_body(req, ApprovalGroupCreate))
        resp.media = render_approval_group(self._service.create_group(req.context.principal, command))
        resp.status = falcon.HTTP_201


class ApprovalGroupResource:
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

    def __init__(self, service: ApprovalConfigService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, group_id: str) -> None:
        resp.media = render_approval_group(self._service.get_group(req.context.principal, path_id(group_id, WHAT)))

    def on_patch(self, req: falcon.Request, resp: falcon.Response, group_id: str) -> None:
        target = path_id(group_id, WHAT)
        command = group_changes(parse_body(req, ApprovalGroupUpdate))
        resp.media = render_approval_group(self._service.update_group(req.context.principal, target, command))


def register(api: Api, ctx: AppContext) -> None:
    service = ApprovalConfigService(ctx.tx, ctx.now, OUTBOX)
    api.add("/approval-groups", ApprovalGroupsResource(service, ctx.cursors))
    api.add("/approval-groups/{group_id}", ApprovalGroupResource(service))
