"""``GET /internal/v1/organizations/{organizationId}/pricing-quotes/{quoteId}/snapshot``: the quote as
the billing connector reads it (``render_quote_snapshot``).

Service-to-service only, authenticated like ``/internal/v1/key-introspection``: the caller presents the
shared ``INTERNAL_API_TOKEN`` as a bearer token; without that setting the route is not served, and it
is never in the external OpenAPI document.
"""

import hmac

import falcon

from dps_common.errors import Unauthorized
from dps_common.http.app import Api
from dps_common.http.params import path_id

from dps_api.resources.context import AppContext
from dps_api.schemas.quote_snapshots import render_quote_snapshot
from dps_api.services.quote_snapshots import QuoteSnapshotService


class QuoteSnapshotResource:
    public = True  # not an x-api-key route: the bearer token below authenticates the calling service

    def __init__(self, service: QuoteSnapshotService, token: str):
        self._service = service
        self._expected = f"Bearer {token}".encode()

    def on_get(self, req: falcon.Request, resp: falcon.Response, organization_id: str, quote_id: str) -> None:
        presented = (req.get_header("Authorization") or "").encode()
        if not hmac.compare_digest(presented, self._expected):
            raise Unauthorized("A service token is required.", code="invalid_service_token")
        # an unknown organization finds no quote: the same 404 as an unknown quote
        organization, quote = path_id(organization_id, "Pricing quote"), path_id(quote_id, "Pricing quote")
        resp.media = render_quote_snapshot(self._service.get(organization, quote))


def register(api: Api, ctx: AppContext) -> None:
    if ctx.settings.internal_api_token:
        resource = QuoteSnapshotResource(QuoteSnapshotService(ctx.tx), ctx.settings.internal_api_token)
        api.add_internal("/organizations/{organization_id}/pricing-quotes/{quote_id}/snapshot", resource)
