"""``/webhook-configs/{id}/deliveries``: the list newest first, one delivery with its attempts, and a
manual retry. Admin keys only (``webhooks:manage``)."""

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.http.paging import serve_page
from dps_common.http.params import invalid_param, path_id
from dps_common.paging import CursorCodec

from dps_webhooks.resources.context import AppContext
from dps_webhooks.schemas.deliveries import (
    Delivery,
    DeliveryDetail,
    DeliveryList,
    render_delivery,
    render_delivery_detail,
)
from dps_webhooks.services.deliveries import WHAT as DELIVERY
from dps_webhooks.services.deliveries import DeliveryService
from dps_webhooks.services.endpoints import WHAT as ENDPOINT

TAG = "Webhooks"
SCOPE = Scope.WEBHOOKS_MANAGE
PAGING = Paging(default=50, maximum=500, items_property="deliveries")
STATUSES = ("PENDING", "SUCCESS", "FAILED", "EXHAUSTED")


def _status_filter(req: falcon.Request) -> str | None:
    status = req.get_param("status")
    if status is not None and status not in STATUSES:
        raise invalid_param("status", f"must be one of: {', '.join(STATUSES)}")
    return status


class DeliveriesResource:
    operations = {
        "GET": Operation(
            summary="List the deliveries of a webhook config, newest first.",
            scope=SCOPE,
            response=DeliveryList,
            paging=PAGING,
            query=(QueryParam("status", {"type": "string", "enum": list(STATUSES)}, "Only deliveries in this status."),),
            tag=TAG,
            description="Delivery history is kept 30 days.",
            operation_id="listWebhookDeliveries",
        ),
    }

    def __init__(self, service: DeliveryService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str) -> None:
        endpoint_id = path_id(webhook_config_id, ENDPOINT)
        status = _status_filter(req)
        principal = req.context.principal
        resp.media = serve_page(
            req,
            PAGING,
            self._cursors,
            lambda page: [render_delivery(d) for d in self._service.list_deliveries(principal, endpoint_id, page, status)],
            {"webhookConfigId": endpoint_id, "status": status},
        )


class DeliveryResource:
    operations = {
        "GET": Operation(
            summary="Get a delivery with its attempts (in attempt order).",
            scope=SCOPE,
            response=DeliveryDetail,
            tag=TAG,
            operation_id="getWebhookDelivery",
        ),
    }

    def __init__(self, service: DeliveryService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str, delivery_id: str) -> None:
        endpoint_id = path_id(webhook_config_id, ENDPOINT)
        detail = self._service.get_delivery(req.context.principal, endpoint_id, path_id(delivery_id, DELIVERY))
        resp.media = render_delivery_detail(detail)


class RetryResource:
    operations = {
        "POST": Operation(
            summary="Redeliver a delivery's event as a new delivery (same eventId, new id, retryOf set), due now.",
            scope=SCOPE,
            response=Delivery,
            status=202,
            errors=(409,),
            tag=TAG,
            description=(
                "Any delivery can be retried, whatever its status. Held until resume while the endpoint is "
                "PAUSED (a retried test delivery is a test delivery and is sent at once); 409 "
                "`webhook_config_disabled` while DISABLED, `webhook_config_revoked` once revoked. An event over "
                "1 MB gives an EXHAUSTED delivery again."
            ),
            operation_id="retryWebhookDelivery",
        ),
    }

    def __init__(self, service: DeliveryService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str, delivery_id: str) -> None:
        endpoint_id = path_id(webhook_config_id, ENDPOINT)
        target = path_id(delivery_id, DELIVERY)
        resp.media = render_delivery(self._service.retry_delivery(req.context.principal, endpoint_id, target))
        resp.status = falcon.HTTP_202


def register(api: Api, ctx: AppContext) -> None:
    service = ctx.deliveries
    api.add("/webhook-configs/{webhook_config_id}/deliveries", DeliveriesResource(service, ctx.cursors))
    api.add("/webhook-configs/{webhook_config_id}/deliveries/{delivery_id}", DeliveryResource(service))
    api.add("/webhook-configs/{webhook_config_id}/deliveries/{delivery_id}/retry", RetryResource(service))
