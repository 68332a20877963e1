"""``POST /internal/v1/key-introspection``: other services check a presented API key here.

Service-to-service only: the ingress never routes ``/internal``, and the caller must present the
shared ``INTERNAL_API_TOKEN`` as a bearer token. Without that setting the route is not served.

The answer comes from the database, never from this process's key cache: the caller caches it for
its own TTL from now, and an answer from our cache would add our entry's age to its bound. It says
whether the key is a console credential (``console``), whether its person has API-key access
(``apiKeyAccess``), and when it stops working (``expiresAt``; null for an integration key).
"""

import hmac

import falcon

from dps_common.errors import Unauthorized
from dps_common.http.app import Api
from dps_common.http.bodies import parse_body

from dps_api.resources.context import AppContext
from dps_api.schemas.key_introspection import IntrospectionRequest, render_active_key, render_inactive_key


class KeyIntrospectionResource:
    public = True  # not an x-api-key route: the bearer token below authenticates the calling service

    def __init__(self, ctx: AppContext, token: str):
        self._authenticator = ctx.authenticator
        self._expected = f"Bearer {token}".encode()

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        presented = (req.get_header("Authorization") or "").encode()
        if not hmac.compare_digest(presented, self._expected):
            raise Unauthorized("A service token is required.", code="invalid_service_token")
        key = parse_body(req, IntrospectionRequest).key
        try:
            record = self._authenticator.record_fresh(key)
            # a console credential's end goes with it: the caller's cache must not outlive it
            resp.media = render_active_key(record.principal, record.expires_at)
        except Unauthorized:
            resp.media = render_inactive_key()


def register(api: Api, ctx: AppContext) -> None:
    if ctx.settings.internal_api_token:
        api.add_internal("/key-introspection", KeyIntrospectionResource(ctx, ctx.settings.internal_api_token))
