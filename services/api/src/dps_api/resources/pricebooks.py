"""``/pricebooks``: list, read, create, and partial update (a new version)."""

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.http.paging import serve_page
from dps_common.http.params import path_id, query_bool
from dps_common.paging import CursorCodec

from dps_api.context import AppContext
from dps_api.schemas.catalog import (
    Pricebook,
    PricebookCreate,
    PricebookList,
    PricebookUpdate,
)
from dps_api.services.pricebooks import PricebookService

TAG = "Catalog"
PAGING = Paging(default=100, maximum=500, items_property="pricebooks")
_RULES = (
    "Entries give a product's unit price in the pricebook's currency, at most one per product, "
    "products of the organization only; assignedUserIds must be users of the organization. "
    "Quotes may use a pricebook assigned to the key's user; admin keys may use any."
)



class PricebooksResource:
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

    def __init__(self, service: PricebookService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        active = query_bool(req, "active")
        principal = req.context.principal
        resp.media = serve_page(
            req, PAGING, self._cursors, lambda page: self._service.list_pricebooks(principal, page, active), {"active": active}
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = parse_body(req, PricebookCreate)
        resp.media = self._service.create_pricebook(req.context.principal, body)
        resp.status = falcon.HTTP_201


class PricebookResource:
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

    def __init__(self, service: PricebookService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, pricebook_id: str) -> None:
        resp.media = self._service.get_pricebook(req.context.principal, path_id(pricebook_id, "Pricebook"))

    def on_patch(self, req: falcon.Request, resp: falcon.Response, pricebook_id: str) -> None:
        target = path_id(pricebook_id, "Pricebook")
        body = parse_body(req, PricebookUpdate)
        resp.media = self._service.update_pricebook(req.context.principal, target, body)


def register(api: Api, ctx: AppContext) -> None:
    service = PricebookService(ctx.tx, ctx.now)
    api.add("/pricebooks", PricebooksResource(service, ctx.cursors))
    api.add("/pricebooks/{pricebook_id}", PricebookResource(service))
