"""``x-api-key`` authentication and scope checks on every request.

The middleware resolves the key to a ``Principal`` through a ``KeyAuthenticator``
(``dps_common.auth.authenticator``), then checks the scope the matched operation declares; 403 names
the missing scope.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import falcon

from dps_common.auth.authenticator import KeyAuthenticator
from dps_common.auth.principal import Principal
from dps_common.errors import MissingScope


class AuthMiddleware:
    def __init__(self, authenticator: KeyAuthenticator, on_authenticated: Callable[[Principal], None] | None = None):
        self._auth = authenticator
        self._on_authenticated = on_authenticated

    def process_resource(
        self, req: falcon.Request, resp: falcon.Response, resource: object, params: dict[str, Any]
    ) -> None:
        if resource is None or getattr(resource, "public", False):
            return
        principal = self._auth.authenticate(req.get_header("x-api-key"))
        req.context.principal = principal
        operation = getattr(resource, "operations", {}).get(req.method)
        if operation is not None and operation.scope is not None and not principal.has(operation.scope):
            raise MissingScope(principal.role, operation.scope)
        if self._on_authenticated is not None:
            self._on_authenticated(principal)
