"""``/pricing-quotes``: list, read, create with lines, and header edits."""

import re
from dataclasses import asdict
from decimal import Decimal
from functools import cache
from typing import Any

import falcon
from pydantic import BaseModel

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.http.paging import serve_page
from dps_common.http.params import path_id, query_enum, query_uuid
from dps_common.paging import CursorCodec

from dps_api.domain.quote_commands import CreateQuote, QuoteLineInput, UpdateQuote
from dps_api.domain.vocabulary import QuoteStatus
from dps_api.resources.context import AppContext
from dps_api.schemas.common import patch
from dps_api.schemas.events import render_change
from dps_api.schemas.quotes import (
    PricingQuote,
    PricingQuoteList,
    QuoteCreate,
    QuoteLineCreate,
    QuoteUpdate,
    render_quote,
)
from dps_api.services.quotes import QuoteFilters, QuoteService

TAG = "Pricing quotes"
PAGING = Paging(default=100, maximum=500, items_property="pricingQuotes")
FILTERS = (
    QueryParam("status", {"type": "string", "enum": [s.value for s in QuoteStatus]}, "Only quotes in this status."),
    QueryParam("ownerUserId", {"type": "string", "format": "uuid"}, "Only quotes owned by this user."),
    QueryParam("opportunityId", {"type": "string", "format": "uuid"}, "Only quotes of this opportunity."),
)
_EDIT_RULES = (
    "Users edit their own quotes; admin keys any (403 `not_quote_owner`). Editing a PENDING_APPROVAL quote "
    "gives 409 `quote_pending_approval` (recall first); editing an APPROVED or REJECTED quote returns it to "
    "DRAFT. Referenced ids in the body that are not the organization's give 400 `unknown_reference` naming "
    "the field. Events: `quote.updated` (and `quote.reopened` when it returns to DRAFT)."
)
_PRICING = (
    "Lines pin the product's current version and its price (the pinned pricebook's entry, else the product's "
    "list price) in the quote currency; later catalog changes never alter the quote. Amounts are per billing "
    "period (unit price x quantity x billing months / price frequency months), rounded half-up to the "
    "currency's minor units; ONE_TIME_FEE lines give oneTimeAmount; TIERED uses the tier holding the quantity; "
    "HOURLY and RAMPED price like PER_UNIT. totalContractValue = recurring per month x term + one-time."
)


def _decimal(raw: str | None) -> Decimal | None:
    return None if raw is None else Decimal(raw)


def line_input(body: QuoteLineCreate) -> QuoteLineInput:
    return QuoteLineInput(
        product_id=body.productId,
        quantity=Decimal(body.quantity),
        custom_name=body.customName,
        discount_percent=_decimal(body.discountPercent),
        net_unit_price=_decimal(body.netUnitPrice),
    )


@cache
def _attribute(name: str) -> str:
    """A body field's name as the command's: ``subscriptionTermMonths`` -> ``subscription_term_months``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _command_fields(body: BaseModel, *left_out: str) -> dict[str, Any]:
    """The body's fields (but ``left_out``) by the command's names; one not sent is ``NOT_SENT``."""
    return {_attribute(name): patch(getattr(body, name)) for name in type(body).model_fields if name not in left_out}


def create_command(body: QuoteCreate) -> CreateQuote:
    """Each field of the body sets the command's field of its name (a new one needs no change here)."""
    return CreateQuote(**_command_fields(body, "lines"), lines=tuple(line_input(line) for line in body.lines))


def update_command(body: QuoteUpdate) -> UpdateQuote:
    return UpdateQuote(**_command_fields(body))


class PricingQuotesResource:
    operations = {
        "GET": Operation(
            summary="List pricing quotes (stable order), with totals but without lines.",
            scope=Scope.QUOTES_READ,
            response=PricingQuoteList,
            paging=PAGING,
            query=FILTERS,
            tag=TAG,
            operation_id="listPricingQuotes",
        ),
        "POST": Operation(
            summary="Create a pricing quote with its lines.",
            scope=Scope.QUOTES_WRITE,
            response=PricingQuote,
            body=QuoteCreate,
            status=201,
            errors=(409,),
            tag=TAG,
            description=_PRICING + " Event: `quote.created`. 403 `locked_price`, `not_quote_owner` (another "
            "owner without an admin key), `pricebook_not_assigned`; 409 `pricebook_inactive`; 400 "
            "`unknown_reference`, `product_inactive`, `no_price_in_currency`, `pricebook_currency_mismatch`.",
            operation_id="createPricingQuote",
        ),
    }

    def __init__(self, service: QuoteService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters = QuoteFilters(
            status=query_enum(req, "status", QuoteStatus),
            owner_user_id=query_uuid(req, "ownerUserId"),
            opportunity_id=query_uuid(req, "opportunityId"),
        )
        principal = req.context.principal
        resp.media = serve_page(
            req,
            PAGING,
            self._cursors,
            lambda page: [render_quote(q) for q in self._service.list(principal, filters, page)],
            asdict(filters),
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        wanted = create_command(parse_body(req, QuoteCreate))
        resp.media = render_change(self._service.create(req.context.principal, wanted), render_quote)
        resp.status = falcon.HTTP_201


class PricingQuoteResource:
    operations = {
        "GET": Operation(
            summary="Get a pricing quote with its lines and totals.",
            scope=Scope.QUOTES_READ,
            response=PricingQuote,
            tag=TAG,
            operation_id="getPricingQuote",
        ),
        "PATCH": Operation(
            summary="Edit a quote's header; only the fields sent change.",
            scope=Scope.QUOTES_WRITE,
            response=PricingQuote,
            body=QuoteUpdate,
            errors=(409,),
            tag=TAG,
            description="Changing currency or pricebookId re-prices every line at its pinned product version "
            "and keeps each line's discount percent. " + _EDIT_RULES,
            operation_id="updatePricingQuote",
        ),
    }

    def __init__(self, service: QuoteService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, quote_id: str) -> None:
        resp.media = render_quote(self._service.get(req.context.principal, path_id(quote_id, "Pricing quote")))

    def on_patch(self, req: falcon.Request, resp: falcon.Response, quote_id: str) -> None:
        target = path_id(quote_id, "Pricing quote")
        edit = update_command(parse_body(req, QuoteUpdate))
        resp.media = render_change(self._service.update(req.context.principal, target, edit), render_quote)


def register(api: Api, ctx: AppContext) -> None:
    service = QuoteService(ctx.tx, ctx.now, ctx.outbox)
    api.add("/pricing-quotes", PricingQuotesResource(service, ctx.cursors))
    api.add("/pricing-quotes/{quote_id}", PricingQuoteResource(service))
