"""``/opportunities``: list, read, create, partial update, and the admin's closed-won action."""

from dataclasses import asdict
from decimal import Decimal
from typing import Any

import falcon
from pydantic import MISSING

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.http.paging import serve_page
from dps_common.http.params import path_id, query_enum, query_str, query_uuid
from dps_common.paging import CursorCodec, PageRequest

from dps_api.domain.opportunity_commands import NewOpportunity, OpportunityChanges
from dps_api.domain.vocabulary import OpportunityStage
from dps_api.resources.context import AppContext
from dps_api.schemas.common import patch
from dps_api.schemas.opportunities import (
    Opportunity,
    OpportunityCreate,
    OpportunityList,
    OpportunityUpdate,
    render_opportunity,
)
from dps_api.services.opportunities import OpportunityFilters, OpportunityService

TAG = "Opportunities"
PAGING = Paging(default=100, maximum=500, items_property="opportunities")
FILTERS = (
    QueryParam(
        "stage", {"type": "string", "enum": [s.value for s in OpportunityStage]}, "Only opportunities in this stage."
    ),
    QueryParam("ownerUserId", {"type": "string", "format": "uuid"}, "Only opportunities owned by this user."),
    QueryParam("crmId", {"type": "string"}, "Only the opportunity with this CRM id."),
)


def _decimal(raw: str | None) -> Decimal | None:
    return None if raw is None else Decimal(raw)


def new_opportunity(body: OpportunityCreate) -> NewOpportunity:
    return NewOpportunity(
        name=body.name,
        account_name=body.accountName,
        crm_id=body.crmId,
        owner_user_id=body.ownerUserId,
        stage=body.stage,
        amount=_decimal(body.amount),
        currency=body.currency,
        close_date=body.closeDate,
    )


def opportunity_changes(body: OpportunityUpdate) -> OpportunityChanges:
    return OpportunityChanges(
        crm_id=patch(body.crmId),
        name=patch(body.name),
        account_name=patch(body.accountName),
        owner_user_id=patch(body.ownerUserId),
        stage=patch(body.stage),
        amount=patch(body.amount if body.amount is MISSING else _decimal(body.amount)),
        currency=patch(body.currency),
        close_date=patch(body.closeDate),
    )


class OpportunitiesResource:
    operations = {
        "GET": Operation(
            summary="List opportunities (stable order).",
            scope=Scope.OPPORTUNITIES_READ,
            response=OpportunityList,
            paging=PAGING,
            query=FILTERS,
            tag=TAG,
            operation_id="listOpportunities",
        ),
        "POST": Operation(
            summary="Create an opportunity.",
            scope=Scope.OPPORTUNITIES_CREATE,
            response=Opportunity,
            body=OpportunityCreate,
            status=201,
            errors=(409,),
            tag=TAG,
            description="409 `crm_id_taken` when the crmId is in use; `use_closed_won_action` for stage CLOSED_WON.",
            operation_id="createOpportunity",
        ),
    }

    def __init__(self, service: OpportunityService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters = OpportunityFilters(
            stage=query_enum(req, "stage", OpportunityStage),
            owner_user_id=query_uuid(req, "ownerUserId"),
            crm_id=query_str(req, "crmId"),
        )
        principal = req.context.principal

        def fetch(page: PageRequest) -> list[dict[str, Any]]:
            return [render_opportunity(o) for o in self._service.list(principal, filters, page)]

        resp.media = serve_page(req, PAGING, self._cursors, fetch, asdict(filters))

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        command = new_opportunity(parse_body(req, OpportunityCreate))
        resp.media = render_opportunity(self._service.create(req.context.principal, command))
        resp.status = falcon.HTTP_201


class OpportunityResource:
    operations = {
        "GET": Operation(
            summary="Get an opportunity.",
            scope=Scope.OPPORTUNITIES_READ,
            response=Opportunity,
            tag=TAG,
            operation_id="getOpportunity",
        ),
        "PATCH": Operation(
            summary="Update an opportunity; only the fields sent change.",
            scope=Scope.OPPORTUNITIES_WRITE,
            response=Opportunity,
            body=OpportunityUpdate,
            errors=(409,),
            tag=TAG,
            description=(
                "409 `use_closed_won_action` when stage is set to CLOSED_WON (use the closed-won action), "
                "`crm_id_taken` when the crmId is in use. Moving a CLOSED_WON opportunity to another stage "
                "needs an admin key (403 otherwise) and clears closedWonAt."
            ),
            operation_id="updateOpportunity",
        ),
    }

    def __init__(self, service: OpportunityService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, opportunity_id: str) -> None:
        opportunity = self._service.get(req.context.principal, path_id(opportunity_id, "Opportunity"))
        resp.media = render_opportunity(opportunity)

    def on_patch(self, req: falcon.Request, resp: falcon.Response, opportunity_id: str) -> None:
        target = path_id(opportunity_id, "Opportunity")
        command = opportunity_changes(parse_body(req, OpportunityUpdate))
        resp.media = render_opportunity(self._service.update(req.context.principal, target, command))


class ClosedWonResource:
    operations = {
        "POST": Operation(
            summary="Mark an opportunity CLOSED_WON and push the closed-won state to the CRM.",
            scope=Scope.CRM_PUSH,
            response=Opportunity,
            errors=(409,),
            tag=TAG,
            description="Sets closedWonAt and emits `opportunity.closed_won`. 409 `already_closed_won`.",
            operation_id="markOpportunityClosedWon",
        ),
    }

    def __init__(self, service: OpportunityService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response, opportunity_id: str) -> None:
        target = path_id(opportunity_id, "Opportunity")
        resp.media = render_opportunity(self._service.mark_closed_won(req.context.principal, target))


def register(api: Api, ctx: AppContext) -> None:
    service = OpportunityService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/opportunities", OpportunitiesResource(service, ctx.cursors))
    api.add("/opportunities/{opportunity_id}", OpportunityResource(service))
    api.add("/opportunities/{opportunity_id}/closed-won", ClosedWonResource(service))
