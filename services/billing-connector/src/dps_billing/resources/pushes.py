"""``/pricing-quotes/{id}/billing-pushes``: request a push (an admin's key only), list the
quote's pushes newest first, read one; ``/billing-pushes``: the organization's pushes, newest first."""

from __future__ import annotations

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.operations import Operation, Paging
from dps_common.http.paging import serve_page
from dps_common.http.params import path_id
from dps_common.paging import CursorCodec

from dps_billing.domain.quote_snapshot import QUOTE
from dps_billing.resources.context import AppContext
from dps_billing.schemas.pushes import BillingPush, BillingPushList, render_push
from dps_billing.services.push_reads import WHAT as PUSH
from dps_billing.services.pushes import PushService

TAG = "Billing"
PAGING = Paging(default=50, maximum=500, items_property="billingPushes")


class PushesResource:
    operations = {
        "POST": Operation(
            summary="Push the approved quote to the billing platform: products, prices and a draft quote (a job).",
            scope=Scope.BILLING_PUSH,
            response=BillingPush,
            status=202,
            body_required=False,
            errors=(409,),
            tag=TAG,
            description=(
                "202 with the new push, queued for a worker; 200 with the push already queued or running for this "
                "quote (no second one starts). The quote as approved now is what is pushed. An admin's key only "
                "(`billing:push` is in no other role): any other key, the quote owner's included, gets 403 "
                "`missing_scope`. 409 "
                "`quote_not_approved`, `billing_not_connected` or `billing_connection_broken`. The push ends "
                "`succeeded` (a `billing.quote_pushed` event) or `failed` (`billing.push_failed`, with the reason)."
            ),
            operation_id="createBillingPush",
        ),
        "GET": Operation(
            summary="The quote's billing pushes, newest first.",
            scope=Scope.QUOTES_READ,
            response=BillingPushList,
            paging=PAGING,
            errors=(404,),
            tag=TAG,
            description="404 for a quote that is not the organization's, as `GET /pricing-quotes/{id}` answers.",
            operation_id="listBillingPushes",
        ),
    }

    def __init__(self, service: PushService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_post(self, req: falcon.Request, resp: falcon.Response, quote_id: str) -> None:
        push, created = self._service.request_push(req.context.principal, path_id(quote_id, QUOTE))
        resp.media = render_push(push)
        resp.status = falcon.HTTP_202 if created else falcon.HTTP_200
        resp.location = f"{req.path}/{push.id}"

    def on_get(self, req: falcon.Request, resp: falcon.Response, quote_id: str) -> None:
        target = path_id(quote_id, QUOTE)
        principal = req.context.principal
        resp.media = serve_page(
            req, PAGING, self._cursors, lambda page: [render_push(p) for p in self._service.list_pushes(principal, target, page)],
            {"quoteId": target},
        )


class PushResource:
    operations = {
        "GET": Operation(
            summary="One billing push: status, progress, warnings, error, the ids created, the review URL.",
            scope=Scope.QUOTES_READ,
            response=BillingPush,
            tag=TAG,
            operation_id="getBillingPush",
        ),
    }

    def __init__(self, service: PushService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, quote_id: str, push_id: str) -> None:
        resp.media = render_push(self._service.get_push(
            req.context.principal, path_id(quote_id, QUOTE), path_id(push_id, PUSH)
        ))


class RecentPushesResource:
    operations = {
        "GET": Operation(
            summary="The organization's billing pushes, newest first (every quote's).",
            scope=Scope.QUOTES_READ,
            response=BillingPushList,
            paging=PAGING,
            tag=TAG,
            description="The same items as the per-quote list, for the keys that may read that list.",
            operation_id="listRecentBillingPushes",
        ),
    }

    def __init__(self, service: PushService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        principal = req.context.principal
        resp.media = serve_page(
            req, PAGING, self._cursors, lambda page: [render_push(p) for p in self._service.recent_pushes(principal, page)]
        )


def register(api: Api, ctx: AppContext) -> None:
    service = ctx.pushes
    api.add("/pricing-quotes/{quote_id}/billing-pushes", PushesResource(service, ctx.cursors))
    api.add("/pricing-quotes/{quote_id}/billing-pushes/{push_id}", PushResource(service))
    api.add("/billing-pushes", RecentPushesResource(service, ctx.cursors))
