"""``/webhook-configs``: list, create, read, update, revoke (DELETE), rotate the secret, test delivery,
recover an outage's exhausted deliveries, and the traffic stats. Admin keys only (``webhooks:manage``)."""

import falcon
from pydantic import MISSING

from dps_common.auth.scopes import Scope
from dps_common.clock import utc_now
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.http.paging import serve_page
from dps_common.http.params import invalid_param, path_id
from dps_common.paging import CursorCodec

from dps_webhooks.domain.endpoint_commands import KEEP, CreateEndpoint, UpdateEndpoint
from dps_webhooks.domain.endpoint_status import EndpointStatus
from dps_webhooks.domain.recovery import MAX_PER_CALL
from dps_webhooks.domain.traffic_stats import DEFAULT_WINDOW, WINDOWS
from dps_webhooks.resources.context import AppContext
from dps_webhooks.schemas.deliveries import Delivery, render_delivery
from dps_webhooks.schemas.endpoint_stats import WebhookConfigStats, render_endpoint_stats
from dps_webhooks.schemas.recovery import WebhookRecoverRequest, WebhookRecovery, render_recovery
from dps_webhooks.schemas.webhook_configs import (
    WebhookConfig,
    WebhookConfigCreate,
    WebhookConfigList,
    WebhookConfigUpdate,
    WebhookConfigWithSecret,
    render_endpoint,
    render_endpoint_with_secret,
)
from dps_webhooks.services.deliveries import DeliveryService
from dps_webhooks.services.endpoint_stats import EndpointStatsService
from dps_webhooks.services.endpoints import WHAT, EndpointService
from dps_webhooks.services.recovery import RecoveryService

TAG = "Webhooks"
SCOPE = Scope.WEBHOOKS_MANAGE
PAGING = Paging(default=100, maximum=500, items_property="webhookConfigs")
_URL_RULES = (
    "400 `validation_error` naming `url` with the reason when the URL is not https, carries credentials, "
    "or its host does not resolve or resolves to a private, loopback, link-local or otherwise blocked address."
)
_REVOKED = "409 `webhook_config_revoked` on a revoked webhook config."
_ROTATE = "POST /webhook-configs/{id}/rotate-secret"  # a replayed answer's secret is null: rotate for a new one


def new_endpoint(body: WebhookConfigCreate) -> CreateEndpoint:
    return CreateEndpoint(body.url, body.description, tuple(body.eventTypes), body.rateLimitPerSecond)


def endpoint_changes(body: WebhookConfigUpdate) -> UpdateEndpoint:
    return UpdateEndpoint(
        url=None if body.url is MISSING else body.url,
        description=None if body.description is MISSING else body.description,
        event_types=None if body.eventTypes is MISSING else tuple(body.eventTypes),
        status=None if body.status is MISSING else EndpointStatus(body.status),
        rate_limit_per_second=KEEP if body.rateLimitPerSecond is MISSING else body.rateLimitPerSecond,
    )


class WebhookConfigsResource:
    operations = {
        "GET": Operation(
            summary="List the organization's webhook configs (stable order).",
            scope=SCOPE,
            response=WebhookConfigList,
            paging=PAGING,
            tag=TAG,
            operation_id="listWebhookConfigs",
        ),
        "POST": Operation(
            summary="Register a webhook endpoint; the answer carries its signing secret, shown only here.",
            scope=SCOPE,
            response=WebhookConfigWithSecret,
            body=WebhookConfigCreate,
            status=201,
            tag=TAG,
            description="The endpoint starts ACTIVE. " + _URL_RULES,
            operation_id="createWebhookConfig",
            secret_fields=("secret",),
            secret_renewal=_ROTATE,
        ),
    }

    def __init__(self, service: EndpointService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        principal = req.context.principal
        resp.media = serve_page(
            req, PAGING, self._cursors, lambda page: [render_endpoint(e) for e in self._service.list_endpoints(principal, page)]
        )

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        command = new_endpoint(parse_body(req, WebhookConfigCreate))
        resp.media = render_endpoint_with_secret(self._service.create_endpoint(req.context.principal, command))
        resp.status = falcon.HTTP_201


class WebhookConfigResource:
    operations = {
        "GET": Operation(
            summary="Get a webhook config.",
            scope=SCOPE,
            response=WebhookConfig,
            tag=TAG,
            operation_id="getWebhookConfig",
        ),
        "PUT": Operation(
            summary="Update a webhook config. Setting status ACTIVE clears consecutiveFailures and disabledReason.",
            scope=SCOPE,
            response=WebhookConfig,
            body=WebhookConfigUpdate,
            errors=(409,),
            tag=TAG,
            description=(
                "Only the fields sent change. Status: ACTIVE <-> PAUSED; DISABLED -> ACTIVE re-enables (events "
                "dropped while disabled are not backfilled); PAUSED holds deliveries (test deliveries are still "
                "sent) and ACTIVE releases them. 409 `invalid_status_transition` for DISABLED -> PAUSED and for "
                "setting DISABLED (revoke with DELETE). " + _REVOKED + " " + _URL_RULES
            ),
            operation_id="updateWebhookConfig",
        ),
        "DELETE": Operation(
            summary="Revoke a webhook config: DISABLED for good, nothing more is delivered. Idempotent.",
            scope=SCOPE,
            status=204,
            tag=TAG,
            description=(
                "Answers 204 without a body, also when already revoked. The record stays readable with "
                "revokedAt set and disabledReason \"Revoked.\"; waiting deliveries are never sent. A revoked "
                "webhook config cannot be reactivated: create a new one."
            ),
            operation_id="revokeWebhookConfig",
        ),
    }

    def __init__(self, service: EndpointService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str) -> None:
        resp.media = render_endpoint(self._service.get_endpoint(req.context.principal, path_id(webhook_config_id, WHAT)))

    def on_put(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str) -> None:
        target = path_id(webhook_config_id, WHAT)
        command = endpoint_changes(parse_body(req, WebhookConfigUpdate))
        resp.media = render_endpoint(self._service.update_endpoint(req.context.principal, target, command))

    def on_delete(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str) -> None:
        self._service.revoke_endpoint(req.context.principal, path_id(webhook_config_id, WHAT))
        resp.status = falcon.HTTP_204


class RotateSecretResource:
    operations = {
        "POST": Operation(
            summary="Replace the signing secret; the new one is returned once and signs the very next attempt.",
            scope=SCOPE,
            response=WebhookConfigWithSecret,
            errors=(409,),
            tag=TAG,
            description="No overlap: the old secret stops signing at once. " + _REVOKED,
            operation_id="rotateWebhookConfigSecret",
            secret_fields=("secret",),
            secret_renewal=_ROTATE,
        ),
    }

    def __init__(self, service: EndpointService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str) -> None:
        issued = self._service.rotate_secret(req.context.principal, path_id(webhook_config_id, WHAT))
        resp.media = render_endpoint_with_secret(issued)


class TestDeliveryResource:
    operations = {
        "POST": Operation(
            summary="Send a test delivery (event type webhook.test), also when the endpoint is PAUSED.",
            scope=SCOPE,
            response=Delivery,
            status=202,
            errors=(409,),
            tag=TAG,
            description=(
                "Due at once whatever the endpoint's eventTypes; retried like any delivery. 409 "
                "`webhook_config_disabled` while DISABLED. " + _REVOKED
            ),
            operation_id="sendWebhookConfigTest",
        ),
    }

    def __init__(self, service: DeliveryService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str) -> None:
        resp.media = render_delivery(self._service.send_test(req.context.principal, path_id(webhook_config_id, WHAT)))
        resp.status = falcon.HTTP_202


class RecoverResource:
    operations = {
        "POST": Operation(
            summary="Recover an outage: redeliver each EXHAUSTED delivery created since a time, oldest first, "
            "spread out.",
            scope=SCOPE,
            response=WebhookRecovery,
            body=WebhookRecoverRequest,
            status=202,
            errors=(409,),
            tag=TAG,
            description=(
                "Each EXHAUSTED delivery of the webhook config created in [since, until) gets one new delivery "
                "of its event, as a manual retry makes it (same eventId, new id, retryOf the exhausted one): "
                "oldest first, due one after another at the config's rateLimitPerSecond, or 20 a second when it "
                "has none, so the receiver is not flooded. Skipped: deliveries already redelivered (by a "
                "recovery or a manual retry), test deliveries, and payloads over 1 MB (undeliverable). FAILED "
                f"deliveries keep their scheduled retries and are left alone. At most {MAX_PER_CALL} a call: "
                "with hasMore, call again with the same since and until to continue. Both times lie within "
                "the 30-day delivery history, until not in the future and after since (400 naming the field). "
                "Held until resume while the config is PAUSED; 409 `webhook_config_disabled` while DISABLED "
                "(set status ACTIVE first). " + _REVOKED
            ),
            operation_id="recoverWebhookConfig",
        ),
    }

    def __init__(self, service: RecoveryService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str) -> None:
        target = path_id(webhook_config_id, WHAT)
        body = parse_body(req, WebhookRecoverRequest)
        recovery = self._service.recover(req.context.principal, target, body.since, body.until)
        resp.media = render_recovery(recovery)
        resp.status = falcon.HTTP_202


class StatsResource:
    operations = {
        "GET": Operation(
            summary="The webhook config's traffic: attempts per hour, succeeded and failed, and the p50/p95 "
            "time to success.",
            scope=SCOPE,
            response=WebhookConfigStats,
            query=(
                QueryParam(
                    "window",
                    {"type": "string", "enum": list(WINDOWS), "default": DEFAULT_WINDOW},
                    "The last 24 hours or 7 days, the current hour included.",
                ),
            ),
            tag=TAG,
            description=(
                "Attempts are counted in the UTC hour they were made: a 2xx answer received in time succeeded, "
                "anything else failed. timeToSuccessMs is over the deliveries that succeeded in the window, "
                "from their creation to the successful attempt's answer."
            ),
            operation_id="getWebhookConfigStats",
        ),
    }

    def __init__(self, service: EndpointStatsService):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, webhook_config_id: str) -> None:
        target = path_id(webhook_config_id, WHAT)
        window = req.get_param("window") or DEFAULT_WINDOW
        if window not in WINDOWS:
            raise invalid_param("window", f"must be one of: {', '.join(WINDOWS)}")
        resp.media = render_endpoint_stats(self._service.stats(req.context.principal, target, window))


def register(api: Api, ctx: AppContext) -> None:
    endpoints = ctx.endpoints
    api.add("/webhook-configs", WebhookConfigsResource(endpoints, ctx.cursors))
    api.add("/webhook-configs/{webhook_config_id}", WebhookConfigResource(endpoints))
    api.add("/webhook-configs/{webhook_config_id}/rotate-secret", RotateSecretResource(endpoints))
    api.add("/webhook-configs/{webhook_config_id}/test", TestDeliveryResource(ctx.deliveries))
    # recovery and stats need nothing but the app's transactions and settings: made here, not in AppContext
    api.add("/webhook-configs/{webhook_config_id}/recover", RecoverResource(RecoveryService(ctx.tx, ctx.settings, utc_now)))
    api.add("/webhook-configs/{webhook_config_id}/stats", StatsResource(EndpointStatsService(ctx.tx, ctx.settings, utc_now)))
