"""The answers the HTTP server writes itself, before or without the app: problem+json like the app's.

gunicorn refuses a request line over ``limit_request_line`` (414), a header over
``limit_request_field_size`` or too many headers (431), and a malformed head (a NUL or another
forbidden byte in a header, a bad request line: 400) before the app sees it, and writes HTML. These
are the same answers as RFC 9457 problem details with the app's fields (``type``, ``title``,
``status``, ``detail``, ``code``, ``requestId``), and always ``Connection: close``: after a
malformed head, where the next request starts is unknown.

A key longer than any real key is a malformed key, 401 ``Invalid API key.`` (spec section 5): when
the header over the size limit is ``x-api-key``, that is the answer rather than 431.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from email.utils import formatdate

from dps_common.auth.authenticator import INVALID_KEY
from dps_common.json import dumps

PROBLEM_JSON = "application/problem+json"
PROBLEM_TYPE_BASE = "https://errors.dealpricing.example/"  # as dps_common.http.problems writes them
_API_KEY_LINE = re.compile(rb"(?im)^x-api-key[ \t]*:[^\r\n]*")


@dataclass(frozen=True)
class Problem:
    status: int
    reason: str  # the status line's reason phrase
    title: str
    detail: str
    code: str

    def response(self, request_id: str | None = None) -> bytes:
        """The whole HTTP/1.1 response, closing the connection."""
        request_id = request_id or secrets.token_hex(16)
        body = dumps(
            {
                "type": PROBLEM_TYPE_BASE + self.code,
                "title": self.title,
                "status": self.status,
                "detail": self.detail,
                "code": self.code,
                "requestId": request_id,
            }
        )
        head = (
            f"HTTP/1.1 {self.status} {self.reason}\r\n"
            f"Date: {formatdate(usegmt=True)}\r\n"
            f"Content-Type: {PROBLEM_JSON}\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"X-Request-Id: {request_id}\r\n"
            "Connection: close\r\n\r\n"
        )
        return head.encode("latin-1") + body


REQUEST_TIMEOUT = Problem(
    408, "Request Timeout", "Request timeout", "The request was not received in time.", "request_timeout"
)
INVALID_API_KEY = Problem(401, "Unauthorized", "Unauthorized", INVALID_KEY, "invalid_api_key")
INTERNAL_ERROR = Problem(
    500, "Internal Server Error", "Internal error", "The server failed to process the request.", "internal_error"
)


def bad_request(detail: str) -> Problem:
    return Problem(400, "Bad Request", "Bad request", detail, "bad_request")


def uri_too_long(limit: int) -> Problem:
    return Problem(
        414, "URI Too Long", "URI too long", f"The request line exceeds the {limit}-byte limit.", "uri_too_long"
    )


def headers_too_large(field_limit: int, max_fields: int) -> Problem:
    return Problem(
        431,
        "Request Header Fields Too Large",
        "Request header fields too large",
        f"A request header exceeds the {field_limit}-byte limit, or there are more than {max_fields} headers.",
        "request_header_fields_too_large",
    )


def api_key_too_long(head: bytes, field_limit: int) -> bool:
    """Whether the ``x-api-key`` header is the one over the size limit in this head (as far as read)."""
    return any(len(line.group()) > field_limit for line in _API_KEY_LINE.finditer(head))
