"""``/webhook-configs``: list, create, read, update, revoke (DELETE), rotate the secret, test delivery.
Admin keys only (``webhooks:manage``)."""

import falcon
from pydantic import MISSING

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging
from dps_common.http.paging import serve_page
from dps_common.http.params import path_id
from dps_common.paging import CursorCodec

from dps_webhooks.domain.endpoint_commands import KEEP, CreateEndpoint, UpdateEndpoint
from dps_webhooks.domain.endpoint_status import EndpointStatus
from dps_webhooks.resources.context import AppContext
from dps_webhooks.schemas.deliveries import Delivery, render_delivery
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
from dps_webhooks.services.endpoints import WHAT, EndpointService

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


def register(api: Api, ctx: AppContext) -> None:
    endpoints = ctx.endpoints
    api.add("/webhook-configs", WebhookConfigsResource(endpoints, ctx.cursors))
    api.add("/webhook-configs/{webhook_config_id}", WebhookConfigResource(endpoints))
    api.add("/webhook-configs/{webhook_config_id}/rotate-secret", RotateSecretResource(endpoints))
    api.add("/webhook-configs/{webhook_config_id}/test", TestDeliveryResource(ctx.deliveries))
