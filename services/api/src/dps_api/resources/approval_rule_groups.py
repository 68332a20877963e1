"""``/approval-rule-groups``: ordered, named sets of rules; each is one step of the approval chain (admin only)."""

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
from dps_api.domain.approval_config_commands import ApprovalRuleGroupChanges, NewApprovalRuleGroup
from dps_api.schemas.approval_config import (
    ApprovalRuleGroup,
    ApprovalRuleGroupCreate,
    ApprovalRuleGroupList,
    ApprovalRuleGroupUpdate,
    render_approval_rule_group,
)
from dps_api.schemas.common import patch
from dps_api.services.approval_config import ApprovalConfigService

TAG = "Approval configuration"
PAGING = Paging(default=100, maximum=500, items_property="approvalRuleGroups")
WHAT = "Approval rule group"


def new_rule_group(body: ApprovalRuleGroupCreate) -> NewApprovalRuleGroup:
    return NewApprovalRuleGroup(body.name, body.position)


def rule_group_changes(body: ApprovalRuleGroupUpdate) -> ApprovalRuleGroupChanges:
    return ApprovalRuleGroupChanges(patch(body.name), patch(body.position))


class ApprovalRuleGroupsResource:
    operations = {
        "GET": Operation(
            summary="List approval rule groups (stable order).",
            scope=Scope.APPROVAL_RULES_READ,
            response=ApprovalRuleGroupList,
            paging=PAGING,
            tag=TAG,
            operation_id="listApprovalRuleGroups",
        ),
        "POST": Operation(
            summary="Create an approval rule group (a step of the approval chain).",
            scope=Scope.APPROVAL_CONFIG_WRITE,
            response=ApprovalRuleGroup,
            body=ApprovalRuleGroupCreate,
            status=201,
            tag=TAG,
            description="Steps run in ascending position; fired rules without a rule group form a final step.",
            operation_id="createApprovalRuleGroup",
        ),
    }

    def __init__(self, service: ApprovalConfigService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        principal = req.context.principal

        def fetch(page: PageRequest) -> list[dict[str, Any]]:
            return [render_approval_rule_group(g) for g in self._service.list_rule_groups(principal, page)]

        resp.media = serve_page(req, PAGING, self._cursors, fetch)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        command = new_rule_group(parse_body(req, ApprovalRuleGroupCreate))
        resp.media = render_approval_rule_group(self._service.create_rule_group(req.context.principal, command))
        resp.status = falcon.HTTP_201


class ApprovalRuleGroupResource:
    operations = {
        "GET": Operation(
            summary="Get an approval rule group.",
            scope=Scope.APPROVAL_RULES_READ,
            response=ApprovalRuleGroup,
            tag=TAG,
            operation_id="getApprovalRuleGroup",
        ),
        "PATCH": Operation(
            summary="Rename or move an approval rule group; only the fields sent change.",
            scope=Scope.APPROVAL_CONFIG_WRITE,
            response=ApprovalRuleGroup,
            body=ApprovalRuleGroupUpdate,
            tag=TAG,
            operation_id="updateApprovalRuleGroup",
        ),
        "DELETE": Operation(
            summary="Delete an approval rule group that no rule belongs to.",
            scope=Scope.APPROVAL_CONFIG_WRITE,
            status=204,
            errors=(409,),
            tag=TAG,
            description="409 `rule_group_in_use` (with `ruleIds`) while rules still belong to it: move or delete "
            "them first, so no rule changes step silently.",
            operation_id="deleteApprovalRuleGroup",
        ),
    }

    def __init__(self, service: ApprovalConfigService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, rule_group_id: str) -> None:
        group = self._service.get_rule_group(req.context.principal, path_id(rule_group_id, WHAT))
        resp.media = render_approval_rule_group(group)

    def on_patch(self, req: falcon.Request, resp: falcon.Response, rule_group_id: str) -> None:
        target = path_id(rule_group_id, WHAT)
        command = rule_group_changes(parse_body(req, ApprovalRuleGroupUpdate))
        resp.media = render_approval_rule_group(self._service.update_rule_group(req.context.principal, target, command))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, rule_group_id: str) -> None:
        self._service.delete_rule_group(req.context.principal, path_id(rule_group_id, WHAT))
        resp.status = falcon.HTTP_204


def register(api: Api, ctx: AppContext) -> None:
    service = ApprovalConfigService(ctx.tx, ctx.now, OUTBOX)
    api.add("/approval-rule-groups", ApprovalRuleGroupsResource(service, ctx.cursors))
    api.add("/approval-rule-groups/{rule_group_id}", ApprovalRuleGroupResource(service))
