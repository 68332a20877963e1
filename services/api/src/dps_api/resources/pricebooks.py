"""``/pricebooks``: list, read, create, and partial update (a new version)."""

from decimal import Decimal
from typing import Any
from uuid import UUID

import falcon
from pydantic import MISSING

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.paging import PageRequest

from dps_api.domain.catalog_commands import NewPricebook, PricebookChanges, PriceEntry
from dps_api.domain.catalog_views import PricebookView
from dps_api.resources.collection import CollectionResource, ItemResource
from dps_api.resources.context import AppContext
from dps_api.schemas.catalog import (
    Pricebook,
    PricebookCreate,
    PricebookEntryIn,
    PricebookList,
    PricebookUpdate,
    render_pricebook,
)
from dps_api.schemas.common import patch
from dps_api.services.pricebooks import PricebookService

TAG = "Catalog"
PAGING = Paging(default=100, maximum=500, items_property="pricebooks")
_RULES = (
    "Entries give a product's unit price in the pricebook's currency, at most one per product, "
    "products of the organization only; assignedUserIds must be users of the organization. "
    "Quotes may use a pricebook assigned to the key's user; admin keys may use any."
)


def _entries(entries: list[PricebookEntryIn]) -> list[PriceEntry]:
    return [PriceEntry(entry.productId, Decimal(entry.unitPrice)) for entry in entries]


def new_pricebook(body: PricebookCreate) -> NewPricebook:
    return NewPricebook(body.name, body.currency, body.active, body.assignedUserIds, _entries(body.entries))


def pricebook_changes(body: PricebookUpdate) -> PricebookChanges:
    return PricebookChanges(
        name=patch(body.name),
        currency=patch(body.currency),
        active=patch(body.active),
        assigned_user_ids=patch(body.assignedUserIds),
        entries=patch(body.entries if body.entries is MISSING else _entries(body.entries)),
    )


class PricebooksResource(CollectionResource[PricebookService, PricebookView]):
    operations = {
        "GET": Operation(
            summary="List pricebooks with their current entries (stable order).",
            scope=Scope.PRICEBOOKS_READ,
            response=PricebookList,
            paging=PAGING,
            query=(QueryParam("active", {"type": "boolean"}, "Only active (true) or inactive (false) pricebooks."),),
            tag=TAG,
            operation_id="listPricebooks",
        ),
        "POST": Operation(
            summary="Create a pricebook (version 1).",
            scope=Scope.PRICEBOOKS_WRITE,
            response=Pricebook,
            body=PricebookCreate,
            status=201,
            tag=TAG,
            description=_RULES,
            operation_id="createPricebook",
        ),
    }

    paging = PAGING
    filters = ("active",)

    def list_page(self, principal: Principal, page: PageRequest, **filters: bool | None) -> list[PricebookView]:
        return self._service.list_pricebooks(principal, page, filters["active"])

    def create(self, principal: Principal, req: falcon.Request) -> PricebookView:
        return self._service.create_pricebook(principal, new_pricebook(parse_body(req, PricebookCreate)))

    def render(self, view: PricebookView) -> dict[str, Any]:
        return render_pricebook(view)


class PricebookResource(ItemResource[PricebookService, PricebookView]):
    operations = {
        "GET": Operation(
            summary="Get a pricebook's current version with its entries.",
            scope=Scope.PRICEBOOKS_READ,
            response=Pricebook,
            tag=TAG,
            operation_id="getPricebook",
        ),
        "PATCH": Operation(
            summary="Update a pricebook; only the fields sent change, and any change makes a new version.",
            scope=Scope.PRICEBOOKS_WRITE,
            response=Pricebook,
            body=PricebookUpdate,
            tag=TAG,
            description=_RULES + " Quotes keep the version they pinned.",
            operation_id="updatePricebook",
        ),
    }

    what = "Pricebook"

    def get(self, principal: Principal, target: UUID) -> PricebookView:
        return self._service.get_pricebook(principal, target)

    def update(self, principal: Principal, target: UUID, req: falcon.Request) -> PricebookView:
        return self._service.update_pricebook(principal, target, pricebook_changes(parse_body(req, PricebookUpdate)))

    def render(self, view: PricebookView) -> dict[str, Any]:
        return render_pricebook(view)


def register(api: Api, ctx: AppContext) -> None:
    service = PricebookService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/pricebooks", PricebooksResource(service, ctx.cursors))
    api.add("/pricebooks/{pricebook_id}", PricebookResource(service))
