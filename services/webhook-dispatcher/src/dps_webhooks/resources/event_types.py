"""``GET /webhook-event-types``: the event types a webhook config can subscribe to, with the schema
and an example of each payload. Admin keys only (``webhooks:manage``), like every webhook operation."""

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.operations import Operation

from dps_webhooks.resources.context import AppContext
from dps_webhooks.schemas.event_types import WebhookEventTypeList, render_event_types
from dps_webhooks.services.event_types import list_event_types


class WebhookEventTypesResource:
    operations = {
        "GET": Operation(
            summary="The event types endpoints subscribe to, each with its description, payload schema and example.",
            scope=Scope.WEBHOOKS_MANAGE,
            response=WebhookEventTypeList,
            tag="Webhooks",
            description=(
                "The catalogue behind a webhook config's eventTypes (an unknown name there is a 400 naming the "
                "field). Not paged: the whole catalogue in one answer, ordered by type."
            ),
            operation_id="listWebhookEventTypes",
        ),
    }

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = render_event_types(list_event_types())


def register(api: Api, ctx: AppContext) -> None:
    api.add("/webhook-event-types", WebhookEventTypesResource())
