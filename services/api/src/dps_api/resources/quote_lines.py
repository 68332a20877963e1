"""``/pricing-quotes/{id}/lines``: add, edit and remove a quote's lines."""

from decimal import Decimal

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation
from dps_common.http.params import path_id

from dps_api.domain.commands import NOT_SENT, NotSent
from dps_api.domain.quote_commands import UpdateQuoteLine
from dps_api.resources.context import AppContext
from dps_api.resources.quotes import _EDIT_RULES, TAG, line_input
from dps_api.schemas.common import patch
from dps_api.schemas.events import render_change
from dps_api.schemas.quotes import PricingQuote, QuoteLineCreate, QuoteLineUpdate, render_quote
from dps_api.services.quote_lines import QuoteLineService

_LOCKED = " 403 `locked_price` when a key without an admin role prices a locked product below list."


def _decimal(raw: str | NotSent) -> Decimal | NotSent:
    return raw if raw is NOT_SENT else Decimal(raw)


def update_command(body: QuoteLineUpdate) -> UpdateQuoteLine:
    return UpdateQuoteLine(
        quantity=_decimal(patch(body.quantity)),
        custom_name=patch(body.customName),
        discount_percent=_decimal(patch(body.discountPercent)),
        net_unit_price=_decimal(patch(body.netUnitPrice)),
    )


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
        wanted = line_input(parse_body(req, QuoteLineCreate))
        resp.media = render_change(self._service.add(req.context.principal, target, wanted), render_quote)
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
        edit = update_command(parse_body(req, QuoteLineUpdate))
        resp.media = render_change(self._service.update(req.context.principal, quote, line, edit), render_quote)

    def on_delete(self, req: falcon.Request, resp: falcon.Response, quote_id: str, line_id: str) -> None:
        quote, line = path_id(quote_id, "Pricing quote"), path_id(line_id, "Quote line")
        self._service.delete(req.context.principal, quote, line)
        resp.status = falcon.HTTP_204


def register(api: Api, ctx: AppContext) -> None:
    service = QuoteLineService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/pricing-quotes/{quote_id}/lines", QuoteLinesResource(service))
    api.add("/pricing-quotes/{quote_id}/lines/{line_id}", QuoteLineResource(service))
