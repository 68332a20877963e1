"""The connector's OpenAPI document: the shared builder's, with the browser's two pages described as
they answer (``text/html`` and redirects, not problem+json), so a checker finds no undocumented
content type or status."""

from __future__ import annotations

from typing import Any

from dps_common.events.catalogue import EventCatalogue
from dps_common.http.app import API_PREFIX, Api
from dps_common.openapi.document import build_document
from dps_common.openapi.events import add_event_catalogue

_HTML = {"text/html": {"schema": {"type": "string"}}}
_LOCATION = {"Location": {"description": "Where the browser goes next.", "schema": {"type": "string"}}}
_SET_COOKIE = {"Set-Cookie": {"description": "The flow's nonce cookie (HttpOnly, SameSite=Lax; Secure over https).",
                              "schema": {"type": "string"}}}
START = "/billing-connection/start"
CALLBACK = "/billing-connection/callback"


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": _HTML}


def browser_pages(document: dict[str, Any]) -> None:
    start = document["paths"][START]["get"]["responses"]
    start.pop("200", None)
    start["303"] = {"description": "To the platform's install page, with the nonce cookie set.",
                    "headers": {**_LOCATION, **_SET_COOKIE}}
    start["400"] = _html("The ticket is unknown, already used or expired: a page saying so.")
    callback = document["paths"][CALLBACK]["get"]["responses"]
    callback["200"] = _html("Connected, or the install was cancelled: a page saying so.")
    callback["303"] = {"description": "Back to the console's return URL with the outcome in its query "
                                      "(`billing=connected` or `billing=error&code=...`).", "headers": _LOCATION}
    callback["400"] = _html("Refused (state invalid, expired, used or from another browser; code invalid): a page.")
    callback["502"] = _html("The platform could not be reached: a page saying so.")
    for responses in (start, callback):
        sorted_responses = dict(sorted(responses.items()))
        responses.clear()
        responses.update(sorted_responses)


def publish(api: Api, title: str, version: str, events: EventCatalogue) -> None:
    """``Api.publish_openapi`` for this service, with the browser's pages described."""
    document = build_document(title, version, API_PREFIX, api.routes)
    add_event_catalogue(document, events)
    for path, resource in api.routes:
        if getattr(resource, "public", False):  # a browser's redirect, a platform's signed call
            for operation in document["paths"][path].values():
                operation["security"] = []
                operation["responses"].pop("401", None)
    browser_pages(document)
    api.publish_document(document)
