"""``/approval-rules``: conditions on a quote that require an approval group's approval (admin only)."""

from decimal import Decimal
from typing import Any
from uuid import UUID

import falcon
from pydantic import MISSING

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging
from dps_common.paging import PageRequest

from dps_api.domain.approval_config_commands import ApprovalRuleChanges, NewApprovalRule
from dps_api.domain.approval_config_views import ApprovalRuleView
from dps_api.domain.approval_rules import Condition
from dps_api.resources.collection import CollectionResource, DeletableItemResource
from dps_api.resources.context import AppContext
from dps_api.schemas.approval_config import (
    ApprovalRule,
    ApprovalRuleCreate,
    ApprovalRuleList,
    ApprovalRuleUpdate,
    ConditionBody,
    render_approval_rule,
)
from dps_api.schemas.common import patch
from dps_api.services.approval_config import ApprovalConfigService

TAG = "Approval configuration"
PAGING = Paging(default=100, maximum=500, items_property="approvalRules")
WHAT = "Approval rule"
_REFERENCES = (
    "400 names approvalGroupId / ruleGroupId when they are not the organization's, and the condition field at fault."
)


def condition(body: ConditionBody) -> Condition:
    """The condition as sent; the service checks it."""
    threshold = Decimal(body.threshold) if body.threshold is not None else None
    return Condition(body.type, threshold, body.currency)


def new_rule(body: ApprovalRuleCreate) -> NewApprovalRule:
    return NewApprovalRule(body.name, condition(body.condition), body.approvalGroupId, body.ruleGroupId, body.active)


def rule_changes(body: ApprovalRuleUpdate) -> ApprovalRuleChanges:
    return ApprovalRuleChanges(
        name=patch(body.name),
        condition=patch(body.condition if body.condition is MISSING else condition(body.condition)),
        approval_group_id=patch(body.approvalGroupId),
        rule_group_id=patch(body.ruleGroupId),
        active=patch(body.active),
    )


class ApprovalRulesResource(CollectionResource[ApprovalConfigService, ApprovalRuleView]):
    operations = {
        "GET": Operation(
            summary="List approval rules (stable order; the cursor resumes by position).",
            scope=Scope.APPROVAL_RULES_READ,
            response=ApprovalRuleList,
            paging=PAGING,
            tag=TAG,
            operation_id="listApprovalRules",
        ),
        "POST": Operation(
            summary="Create an approval rule.",
            scope=Scope.APPROVAL_CONFIG_WRITE,
            response=ApprovalRule,
            body=ApprovalRuleCreate,
            status=201,
            tag=TAG,
            description=_REFERENCES,
            operation_id="createApprovalRule",
        ),
    }

    paging = PAGING

    def list_page(self, principal: Principal, page: PageRequest, **filters: bool | None) -> list[ApprovalRuleView]:
        return self._service.list_rules(principal, page)

    def create(self, principal: Principal, req: falcon.Request) -> ApprovalRuleView:
        return self._service.create_rule(principal, new_rule(parse_body(req, ApprovalRuleCreate)))

    def render(self, view: ApprovalRuleView) -> dict[str, Any]:
        return render_approval_rule(view)


class ApprovalRuleResource(DeletableItemResource[ApprovalConfigService, ApprovalRuleView]):
    operations = {
        "GET": Operation(
            summary="Get an approval rule.",
            scope=Scope.APPROVAL_RULES_READ,
            response=ApprovalRule,
            tag=TAG,
            operation_id="getApprovalRule",
        ),
        "PATCH": Operation(
            summary="Update an approval rule; only the fields sent change.",
            scope=Scope.APPROVAL_CONFIG_WRITE,
            response=ApprovalRule,
            body=ApprovalRuleUpdate,
            tag=TAG,
            description=_REFERENCES + " Approval requests already submitted keep the rules they snapshotted.",
            operation_id="updateApprovalRule",
        ),
        "DELETE": Operation(
            summary="Delete an approval rule; approval requests already submitted keep their snapshot of it.",
            scope=Scope.APPROVAL_CONFIG_WRITE,
            status=204,
            tag=TAG,
            operation_id="deleteApprovalRule",
        ),
    }

    what = WHAT

    def get(self, principal: Principal, target: UUID) -> ApprovalRuleView:
        return self._service.get_rule(principal, target)

    def update(self, principal: Principal, target: UUID, req: falcon.Request) -> ApprovalRuleView:
        return self._service.update_rule(principal, target, rule_changes(parse_body(req, ApprovalRuleUpdate)))

    def delete(self, principal: Principal, target: UUID) -> None:
        self._service.delete_rule(principal, target)

    def render(self, view: ApprovalRuleView) -> dict[str, Any]:
        return render_approval_rule(view)


def register(api: Api, ctx: AppContext) -> None:
    service = ApprovalConfigService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/approval-rules", ApprovalRulesResource(service, ctx.cursors))
    api.add("/approval-rules/{rule_id}", ApprovalRuleResource(service))
