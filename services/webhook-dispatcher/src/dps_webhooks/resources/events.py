"""``/events``: the organization's event log, newest first, and one event exactly as delivered. Every
role reads it (``events:read``), view-only keys and console credentials included: it shows what the
organization's webhooks were sent, nothing an endpoint's configuration would reveal."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import falcon

from dps_common.auth.scopes import Scope
from dps_common.http.app import Api
from dps_common.http.operations import Operation, Paging, QueryParam
from dps_common.http.paging import cursor_scope, page_request, page_response
from dps_common.http.params import invalid_param, path_id
from dps_common.paging import CursorCodec

from dps_webhooks.domain.event_types import known_event_types, unknown_event_type_message
from dps_webhooks.domain.event_views import EventFilter, list_position
from dps_webhooks.resources.context import AppContext
from dps_webhooks.schemas.event_log import EventBody, EventList, render_event, render_event_body
from dps_webhooks.services.event_log import WHAT, EventLog

TAG = "Events"
SCOPE = Scope.EVENTS_READ
PAGING = Paging(default=50, maximum=500, items_property="events")  # as the other history, the deliveries
TEST_EVENT_TYPE = "webhook.test"
# RFC 3339 with its offset; an unencoded "+" in a query string arrives as a space, read back as "+"
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+\- ]\d{2}:\d{2})")
_TIME_HINT = "must be an RFC 3339 date-time with its offset, e.g. 2026-11-02T10:00:00Z"

CATCH_UP = (
    "Catching up after downtime: list the events with `createdAfter` set a few minutes before the `createdAt` "
    "of the last event you processed (the overlap covers events stored just before it but committed after), "
    "page to the end (`nextCursor` null), skip the ids you already handled, and for each one left either "
    "`GET /events/{eventId}` (the exact payload, to process as if delivered) or let it be delivered again: "
    "`POST /webhook-configs/{id}/deliveries/{deliveryId}/retry` for one delivery, "
    "`POST /webhook-configs/{id}/recover` for every exhausted delivery of an endpoint since a time. "
    "Apply what you fetch in `occurredAt` order and deduplicate by the event id, as for deliveries. "
    "Events are kept 30 days, whether or not any endpoint was sent them."
)


def _time_param(req: falcon.Request, name: str) -> datetime | None:
    raw = req.get_param(name)
    if raw is None:
        return None
    if not _RFC3339.fullmatch(raw):
        raise invalid_param(name, _TIME_HINT)
    text = raw[:-6] + "+" + raw[-5:] if raw[-6] == " " else raw
    try:
        # in UTC: the same moment written with another offset is the same filter (and cursor scope)
        return datetime.fromisoformat(text.replace("z", "Z")).astimezone(UTC)
    except ValueError:  # the right shape, not a real moment (2026-02-30, 25:00)
        raise invalid_param(name, _TIME_HINT) from None


def _filters(req: falcon.Request) -> EventFilter:
    event_type = req.get_param("type")
    if event_type is not None and event_type != TEST_EVENT_TYPE and event_type not in known_event_types():
        raise invalid_param("type", unknown_event_type_message(event_type))
    after, before = _time_param(req, "createdAfter"), _time_param(req, "createdBefore")
    if after is not None and before is not None and before <= after:
        raise invalid_param("createdBefore", "must be later than createdAfter")
    return EventFilter(event_type, after, before)


def _position(item: dict[str, Any]) -> list[Any]:
    return list_position(item["createdAt"], item["id"])


class EventsResource:
    operations = {
        "GET": Operation(
            summary="List the organization's events, newest first: what its webhook endpoints were (or would "
            "have been) sent.",
            scope=SCOPE,
            response=EventList,
            paging=PAGING,
            query=(
                # a string, not an enumeration: the catalogue's types and webhook.test, which no schema
                # names, would be a client class of its own for one parameter
                QueryParam(
                    "type",
                    {"type": "string", "examples": ["quote.approved"]},
                    "Only events of this type: one of GET /webhook-event-types, or webhook.test (the test "
                    "deliveries' events). Any other is a 400 naming `type`.",
                ),
                QueryParam(
                    "createdAfter",
                    {"type": "string", "format": "date-time"},
                    "Only events received at or after this time (RFC 3339 with its offset; send `+` as %2B).",
                ),
                QueryParam(
                    "createdBefore",
                    {"type": "string", "format": "date-time"},
                    "Only events received before this time; must be later than createdAfter.",
                ),
            ),
            tag=TAG,
            description=(
                "Every event of the organization the service received in the last 30 days, whether or not an "
                "endpoint subscribed to it (test deliveries' events too, type webhook.test), newest first by "
                "`createdAt` (when the service received it), then id. A value of `type`, `createdAfter` or "
                "`createdBefore` that cannot be read is a 400 `validation_error` naming the parameter; a "
                "cursor is bound to its filters.\n\n" + CATCH_UP
            ),
            operation_id="listEvents",
        ),
    }

    def __init__(self, service: EventLog, cursors: CursorCodec):
        self._service = service
        self._cursors = cursors

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        filters = _filters(req)
        scope = cursor_scope(req, {"type": filters.type, "createdAfter": filters.received_after,
                                   "createdBefore": filters.received_before})
        page = page_request(req, PAGING, self._cursors, scope)
        events = self._service.list_events(req.context.principal, filters, page)
        resp.media = page_response([render_event(e) for e in events], page, PAGING, self._cursors, scope, _position)


class EventResource:
    operations = {
        "GET": Operation(
            summary="Get an event exactly as delivered: the same bytes every attempt sent and signed.",
            scope=SCOPE,
            response=EventBody,
            errors=(409,),
            tag=TAG,
            description=(
                "The answer's body is the payload byte for byte as every delivery attempt sent it (and as its "
                "`webhook-signature` signed it), with `Content-Type: application/json`: process it as a "
                "delivered event. 404 for an id that is unknown, another organization's or older than the 30 "
                "days events are kept. 409 `event_payload_not_kept` for an event whose payload was over 1 MB: "
                "it was never delivered and its body was not kept.\n\n" + CATCH_UP
            ),
            operation_id="getEvent",
        ),
    }

    def __init__(self, service: EventLog):
        self._service = service

    def on_get(self, req: falcon.Request, resp: falcon.Response, event_id: str) -> None:
        body = self._service.event_body(req.context.principal, path_id(event_id, WHAT))
        resp.content_type = falcon.MEDIA_JSON
        resp.data = render_event_body(body)


def register(api: Api, ctx: AppContext) -> None:
    # the event log needs nothing but the app's transactions: made here rather than in AppContext
    service = EventLog(ctx.tx)
    api.add("/events", EventsResource(service, ctx.cursors))
    api.add("/events/{event_id}", EventResource(service))
