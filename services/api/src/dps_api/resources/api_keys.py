"""``/api-keys``: the settings console's API keys page (list, issue, rotate, revoke).

Only a console credential holds ``api-keys:manage`` (an integration key never does, even an
admin's): keys are issued in the application's settings by a person with API-key access (spec
section 5). An admin manages every integration key of the organization; a person granted access,
their own keys, never above their own role."""

from typing import Any

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body
from dps_common.http.operations import Operation, Paging
from dps_common.http.paging import serve_page
from dps_common.http.params import path_id
from dps_common.paging import CursorCodec, PageRequest

from dps_api.domain.api_key_commands import NewApiKey
from dps_api.resources.context import AppContext
from dps_api.schemas.api_keys import (
    ApiKey,
    ApiKeyCreate,
    ApiKeyList,
    ApiKeyWithSecret,
    render_api_key,
    render_issued_key,
)
from dps_api.services.api_keys import ApiKeyService

TAG = "API keys"
PAGING = Paging(default=100, maximum=500, items_property="apiKeys")
SCOPE = Scope.API_KEYS_MANAGE
_ROTATE = "POST /api-keys/{id}/rotate"
_WHO = (
    "Only a credential of the settings console holds `api-keys:manage` (an integration key never does, "
    "even an admin's): the signed-in person must be an admin or have been granted API-key access. "
)
_OWN = "A person who is not an admin acts on their own keys only: another person's key is 404. "


class ApiKeysResource:
    operations = {
        "GET": Operation(
            summary="List the integration keys the signed-in person manages (never a secret).",
            scope=SCOPE,
            response=ApiKeyList,
            paging=PAGING,
            tag=TAG,
            description=_WHO + "An admin sees every integration key of the organization, a person with "
            "API-key access their own; revoked keys too, by id (creation order). Console credentials are "
            "never listed.",
            operation_id="listApiKeys",
        ),
        "POST": Operation(
            summary="Issue an integration key; the answer carries the whole key, shown only here.",
            scope=SCOPE,
            response=ApiKeyWithSecret,
            body=ApiKeyCreate,
            status=201,
            tag=TAG,
            description=_WHO + "The key acts as `userId` (default: the signed-in person); only an admin may "
            "name another user of the organization (otherwise 403 `forbidden`; 400 naming `userId` when no "
            "user of the organization has it). A role higher than the signed-in person's own is 403 "
            "`role_too_high` naming `role`. The key works at once.",
            operation_id="createApiKey",
            secret_fields=("secret",),
            secret_renewal=_ROTATE,
        ),
    }

    def __init__(self, service: ApiKeyService, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        principal = req.context.principal

        def fetch(page: PageRequest) -> list[dict[str, Any]]:
            return [render_api_key(k) for k in self._service.list_keys(principal, page)]

        resp.media = serve_page(req, PAGING, self._cursors, fetch)

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = parse_body(req, ApiKeyCreate)
        issued = self._service.issue(req.context.principal, NewApiKey(body.name, body.role, body.userId))
        resp.media = render_issued_key(issued)
        resp.status = falcon.HTTP_201


class ApiKeyRotateResource:
    operations = {
        "POST": Operation(
            summary="Rotate an integration key: a new value, shown only here; the old one stops working at once.",
            scope=SCOPE,
            response=ApiKeyWithSecret,
            errors=(409,),
            tag=TAG,
            description=_WHO + _OWN + "The key keeps its id, name, role and user; its prefix changes. Every "
            "service refuses the old value at once. 409 `api_key_revoked` for a revoked key; 403 "
            "`role_too_high` for a key whose role is higher than the signed-in person's own.",
            operation_id="rotateApiKey",
            secret_fields=("secret",),
            secret_renewal=_ROTATE,
        ),
    }

    def __init__(self, service: ApiKeyService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        issued = self._service.rotate(req.context.principal, path_id(key_id, "API key"))
        resp.media = render_issued_key(issued)


class ApiKeyRevokeResource:
    operations = {
        "POST": Operation(
            summary="Revoke an integration key: every service refuses it at once.",
            scope=SCOPE,
            response=ApiKey,
            tag=TAG,
            description=_WHO + _OWN + "Revoking a revoked key changes nothing (200, the key as it is).",
            operation_id="revokeApiKey",
        ),
    }

    def __init__(self, service: ApiKeyService):
        self._service = service

    def on_post(self, req: falcon.Request, resp: falcon.Response, key_id: str) -> None:
        resp.media = render_api_key(self._service.revoke(req.context.principal, path_id(key_id, "API key")))


def register(api: Api, ctx: AppContext) -> None:
    service = ApiKeyService(ctx.tx, ctx.settings.api_key_pepper, ctx.now, ctx.authenticator.forget)
    api.add("/api-keys", ApiKeysResource(service, ctx.cursors))
    api.add("/api-keys/{key_id}/rotate", ApiKeyRotateResource(service))
    api.add("/api-keys/{key_id}/revoke", ApiKeyRevokeResource(service))
