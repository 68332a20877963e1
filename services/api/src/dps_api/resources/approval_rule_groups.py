"""``/approval-rule-groups``: ordered, named sets of rules; each is one step of the approval chain (admin only)."""

from typing import Any
from uuid import UUID

import falcon

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging
from dps_common.paging import PageRequest

from dps_api.domain.approval_config_commands import ApprovalRuleGroupChanges, NewApprovalRuleGroup
from dps_api.domain.approval_config_views import ApprovalRuleGroupView
from dps_api.resources.collection import CollectionResource, DeletableItemResource
from dps_api.resources.context import AppContext
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


class ApprovalRuleGroupsResource(CollectionResource[ApprovalConfigService, ApprovalRuleGroupView]):
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

    paging = PAGING

    def list_page(self, principal: Principal, page: PageRequest, **filters: bool | None) -> list[ApprovalRuleGroupView]:
        return self._service.list_rule_groups(principal, page)

    def create(self, principal: Principal, req: falcon.Request) -> ApprovalRuleGroupView:
        return self._service.create_rule_group(principal, new_rule_group(parse_body(req, ApprovalRuleGroupCreate)))

    def render(self, view: ApprovalRuleGroupView) -> dict[str, Any]:
        return render_approval_rule_group(view)


class ApprovalRuleGroupResource(DeletableItemResource[ApprovalConfigService, ApprovalRuleGroupView]):
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

    what = WHAT

    def get(self, principal: Principal, target: UUID) -> ApprovalRuleGroupView:
        return self._service.get_rule_group(principal, target)

    def update(self, principal: Principal, target: UUID, req: falcon.Request) -> ApprovalRuleGroupView:
        command = rule_group_changes(parse_body(req, ApprovalRuleGroupUpdate))
        return self._service.update_rule_group(principal, target, command)

    def delete(self, principal: Principal, target: UUID) -> None:
        self._service.delete_rule_group(principal, target)

    def render(self, view: ApprovalRuleGroupView) -> dict[str, Any]:
        return render_approval_rule_group(view)


def register(api: Api, ctx: AppContext) -> None:
    service = ApprovalConfigService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/approval-rule-groups", ApprovalRuleGroupsResource(service, ctx.cursors))
    api.add("/approval-rule-groups/{rule_group_id}", ApprovalRuleGroupResource(service))
