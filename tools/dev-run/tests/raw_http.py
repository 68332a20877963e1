"""Requests as raw bytes, for what a client library will not send: broken chunked framings, a body the
client ends early, credentials in every header a credential travels in; and the answers read back."""

from __future__ import annotations

import json
import re
import secrets
import socket

from dps_testing.edge_checks import MALFORMED_CHUNKED_BODIES

# four broken framings: the shared three and a chunk size past any length; and a body the client ends
# early (it closes its side), whose answer may also be Caddy's empty 499 (it may see the closed side first)
BROKEN = {**MALFORMED_CHUNKED_BODIES, "chunk-size-overflow": b"fffffffffffffffffffff\r\n{}\r\n0\r\n\r\n"}
CUT_SHORT = b"10\r\n{}"


def raw_send(address: str, head: bytes, body: bytes = b"", *, half_close: bool = False, until_closed: bool = False) -> bytes:
    """The raw answer (its Content-Length read); with ``until_closed``, read on until the proxy closes
    the connection: a marker says so if it has not within 10 s."""
    host, port = address.split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head + body)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        answer = b""
        while not _complete(answer) and (chunk := sock.recv(65536)):
            answer += chunk
        if until_closed:
            sock.settimeout(10)
            try:
                while chunk := sock.recv(65536):
                    answer += chunk
            except TimeoutError:
                answer += b"<the proxy kept the connection open>"
        return answer


def _complete(answer: bytes) -> bool:
    head, found, body = answer.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length: *(\d+)", head)
    return bool(found and length and len(body) >= int(length.group(1)))


def request_head(path: str, headers: dict[str, str], framing: str = "Transfer-Encoding: chunked") -> bytes:
    lines = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return f"POST {path} HTTP/1.1\r\nHost: dps.localhost\r\nContent-Type: application/json\r\n{framing}\r\n{lines}\r\n".encode()


def read_problem(answer: bytes) -> tuple[int, dict[str, str], dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines)}
    assert headers.get("content-type") == "application/problem+json", answer
    return int(status_line.split()[1]), headers, json.loads(body)


def fresh_credentials() -> dict[str, str]:
    """Headers carrying a credential each, fresh values."""
    return {
        "x-api-key": f"dps_{secrets.token_urlsafe(9)}_{secrets.token_urlsafe(30)}",
        "Authorization": f"Bearer {secrets.token_urlsafe(24)}",
        "Cookie": f"dps_console_session={secrets.token_urlsafe(24)}; dps_console_csrf={secrets.token_hex(16)}",
        "X-CSRF-Token": secrets.token_hex(16),
        "webhook-signature": f"v1,{secrets.token_urlsafe(32)}",
        "Stripe-Signature": f"t=1,v1={secrets.token_hex(32)}",
    }
