"""``/pricing-quotes/{id}/lines``: add, edit and remove a quote's lines."""

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation
from dps_common.http.params import path_id

from dps_api.context import AppContext
from dps_api.resources.quotes import _EDIT_RULES, TAG
from dps_api.schemas.quotes import PricingQuote, QuoteLineCreate, QuoteLineUpdate, render_quote
from dps_api.services.quote_lines import QuoteLineService

_LOCKED = " 403 `locked_price` when a key without an admin role prices a locked product below list."


class QuoteLinesResource:
    operations = {
        "POST": Operation(
            summary="Add a line to a quote; returns the whole quote.",
            scope=Scope.QUOTES_WRITE,
            response=PricingQuote,
            body=QuoteLineCreate,
            status=201,
            errors=(409,),
            tag=TAG,
            description="The line pins the product's current version and the quote's pinned pricebook. "
            "409 `quote_line_limit` past 500 lines." + _LOCKED + " " + _EDIT_RULES,
            operation_id="addPricingQuoteLine",
        ),
    }

    def __init__(self, service: QuoteLineService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response, quote_id: str) -> None:
        target = path_id(quote_id, "Pricing quote")
        wanted = parse_body(req, QuoteLineCreate).command()
        resp.media = render_quote(self._service.add(req.context.principal, target, wanted))
        resp.status = falcon.HTTP_201


class QuoteLineResource:
    operations = {
        "PATCH": Operation(
            summary="Edit a quote line; only the fields sent change. Returns the whole quote.",
            scope=Scope.QUOTES_WRITE,
            response=PricingQuote,
            body=QuoteLineUpdate,
            errors=(409,),
            tag=TAG,
            description="Sending discountPercent or netUnitPrice switches the line to that side of the "
            "negotiation; the other is derived." + _LOCKED + " " + _EDIT_RULES,
            operation_id="updatePricingQuoteLine",
        ),
        "DELETE": Operation(
            summary="Remove a quote line; later lines move up one position.",
            scope=Scope.QUOTES_WRITE,
            status=204,
            errors=(409,),
            tag=TAG,
            description=_EDIT_RULES,
            operation_id="deletePricingQuoteLine",
        ),
    }

    def __init__(self, service: QuoteLineService):
        self._service = service

    def on_patch(self, req: falcon.Request, resp: falcon.Response, quote_id: str, line_id: str) -> None:
        quote, line = path_id(quote_id, "Pricing quote"), path_id(line_id, "Quote line")
        edit = parse_body(req, QuoteLineUpdate).command()
        resp.media = render_quote(self._service.update(req.context.principal, quote, line, edit))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, quote_id: str, line_id: str) -> None:
        quote, line = path_id(quote_id, "Pricing quote"), path_id(line_id, "Quote line")
        self._service.delete(req.context.principal, quote, line)
        resp.status = falcon.HTTP_204


def register(api: Api, ctx: AppContext) -> None:
    service = QuoteLineService(ctx.tx, ctx.now)
    api.add("/pricing-quotes/{quote_id}/lines", QuoteLinesResource(service))
    api.add("/pricing-quotes/{quote_id}/lines/{line_id}", QuoteLineResource(service))
