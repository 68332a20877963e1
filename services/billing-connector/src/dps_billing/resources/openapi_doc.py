"""The connector's OpenAPI document: the shared builder's, with the browser's two pages described as
they answer (``text/html`` and redirects, not problem+json), so a checker finds no undocumented
content type or status."""

from __future__ import annotations

from typing import Any

_HTML = {"text/html": {"schema": {"type": "string"}}}
_LOCATION = {"Location": {"description": "Where the browser goes next.", "schema": {"type": "string"}}}
_SET_COOKIE = {"Set-Cookie": {"description": "The flow's nonce cookie (HttpOnly, SameSite=Lax; Secure over https).",
                              "schema": {"type": "string"}}}
START = "/billing-connection/start"
CALLBACK = "/billing-connection/callback"


def _html(description: str) -> dict[str, Any]:
    return {"description": description, "content": _HTML}


def browser_pages(document: dict[str, Any]) -> None:
    """``Api.publish_openapi``'s ``amend`` for the connector: its two browser pages as they answer."""
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

