"""What ``make run``'s proxy answers and logs itself, so that the one address answers like the
services behind it and its log carries no credential.

Errors. When Caddy cannot get an answer from a service it raises an error; these routes (Caddy's
server ``errors``, its ``handle_errors``) turn each into the problem document the services write
(``type``, ``title``, ``status``, ``detail``, ``code``, ``requestId``), matched by the error's status
and message (Go's ``net/http`` gives no other sign of where the error came from):

- the client's body is broken (a bad chunk size, a missing chunk terminator, a bad trailer, or the
  connection ended before the body did): Go's reader fails while Caddy streams the body to the
  service, Caddy says 502; the answer is the services' own, ``400 malformed_body``, closing;
- the client's body stopped (Caddy's own read deadline, a backstop to the services' 5 s):
  ``408 request_timeout``, closing;
- the service cannot be reached (stopped, restarting): ``503 service_unavailable`` with
  ``Retry-After``; any other failure of the service: ``502 upstream_error`` (``504`` for a timeout).

Handled this way, Caddy logs the error at DEBUG only; the access log (``http.log.access``) keeps one
line, with the error, for each answer of 500 and over. What Go's server refuses before any route (a head it cannot
parse: 400, 431; a ``Transfer-Encoding`` other than ``chunked``: 501) it writes itself, in plain text.

Logs. Every line goes through Caddy's ``filter`` encoder: no request or response headers at all
(``x-api-key``, ``Authorization``, cookies, signatures, CSRF tokens: none is listed, all are
dropped), and the request's URI without its query (sign-in links' ``token``, the billing flow's
``ticket``, ``state`` and ``code``)."""

from __future__ import annotations

import json
from typing import Any

PROBLEM_TYPE_BASE = "https://errors.dealpricing.example/"  # as the services write them (dps_common.edge.problems)
PROBLEM_JSON = "application/problem+json"
RETRY_AFTER_SECONDS = 1  # a restarting service answers again within a second or two
# the errors Go's net/http reader gives for a broken chunked body or one cut short (the client's side)
BROKEN_BODY = (
    r"chunk|malformed MIME header|unexpected EOF|too much non-data|header line too long|trailer"
)
UNREACHABLE = r"^dial tcp |no upstreams available"  # the service is not listening (stopped, restarting)
CLIENT_READ_TIMEOUT = r"^read tcp "  # Caddy's own read deadline on the client's connection
# what a log line may never show: whole objects dropped, the URI's query replaced
LOG_FILTERS: dict[str, dict[str, Any]] = {
    "request>headers": {"filter": "delete"},
    "request>uri": {"filter": "regexp", "regexp": r"\?.*$", "value": "?(query not logged)"},
    "request>tls": {"filter": "delete"},
    "resp_headers": {"filter": "delete"},
    "headers": {"filter": "delete"},  # the reverse proxy's debug lines: the service's response headers
}


def problem_body(status: str, title: str, detail: str, code: str) -> str:
    """The problem document; ``status`` may be a placeholder (a number once Caddy replaces it)."""
    fields = json.dumps({"type": PROBLEM_TYPE_BASE + code, "title": title})[:-1]
    rest = json.dumps({"detail": detail, "code": code, "requestId": "{http.request.uuid}"})[1:]
    return f'{fields}, "status": {status}, {rest}'


def _answer(status: int | str, title: str, detail: str, code: str, *, close: bool = False,
            retry_after: int | None = None) -> dict[str, Any]:
    headers = {"Content-Type": [PROBLEM_JSON], "X-Request-Id": ["{http.request.uuid}"]}
    if close:  # where the next request would start is unknown: as the services, close
        headers["Connection"] = ["close"]
    if retry_after is not None:
        headers["Retry-After"] = [str(retry_after)]
    return {"handler": "static_response", "status_code": status, "headers": headers,
            "body": problem_body(str(status), title, detail, code)}


def _when(expression: str, answer: dict[str, Any]) -> dict[str, Any]:
    handle = [answer]
    if answer["status_code"] >= 500:  # the access line of the answer says why (Go's error: no request data)
        handle.insert(0, {"handler": "log_append", "key": "error", "value": "{http.error.message}"})
    return {"match": [{"expression": expression}], "handle": handle, "terminal": True}


def error_routes() -> list[dict[str, Any]]:
    """Caddy's ``errors`` routes of the server, tried in order."""
    message = "{http.error.message}"
    code = "{http.error.status_code}"
    return [
        _when(f"{code} == 499 || {code} == 502 && {message}.matches({json.dumps(BROKEN_BODY)})", _answer(
            400, "Bad request", "The request body is malformed: its framing is broken or it ended early.",
            "malformed_body", close=True)),
        _when(f"{code} == 504 && {message}.matches({json.dumps(CLIENT_READ_TIMEOUT)})", _answer(
            408, "Request timeout", "The request was not received in time.", "request_timeout", close=True)),
        _when(f"{code} >= 502 && {code} <= 504 && {message}.matches({json.dumps(UNREACHABLE)})", _answer(
            503, "Service unavailable", "The service cannot answer right now; retry shortly.",
            "service_unavailable", retry_after=RETRY_AFTER_SECONDS)),
        _when(f"{code} == 504", _answer(
            504, "Gateway timeout", "The service did not answer in time.", "upstream_error")),
        _when(f"{code} >= 500", _answer(
            502, "Upstream failure", "The service failed to answer.", "upstream_error")),
        {"handle": [_answer("{http.error.status_code}", "{http.error.status_text}",
                            "The proxy could not handle the request.", "proxy_error")]},
    ]


def log_encoder() -> dict[str, Any]:
    """JSON lines, every one through the filters (``LOG_FILTERS``)."""
    return {"format": "filter", "wrap": {"format": "json"}, "fields": LOG_FILTERS}
