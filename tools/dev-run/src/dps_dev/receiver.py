"""``dealpricing-dev receiver``: a webhook receiver for trying webhooks on this machine.

It listens on plain HTTP (loopback by default), checks each delivery's Standard Webhooks signature
with the ``standardwebhooks`` package against the endpoint's signing secret (``--secret``, the
``whsec_`` value ``POST /webhook-configs`` returned), prints one line per delivery, and answers 200
when the signature holds, 401 when it does not (the dispatcher then retries, as it would for any
receiver). The dispatcher delivers to plain http:// on loopback only with
``WEBHOOK_ALLOW_INSECURE_LOOPBACK=true`` (``WEBHOOK_ALLOW_INSECURE_LOOPBACK=true make run``).
"""

from __future__ import annotations

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks import Webhook, WebhookVerificationError

MAX_BODY = 1024 * 1024


def add_parser(commands: Any) -> None:
    parser = commands.add_parser("receiver", help="print the webhook deliveries it receives and verifies")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument(
        "--secret", action="append", required=True, help="the endpoint's whsec_ signing secret (repeatable)"
    )
    parser.add_argument("--body", action="store_true", help="print each delivery's JSON body too")


def main(args: argparse.Namespace) -> int:
    verifiers = [Webhook(secret) for secret in args.secret]
    handler = type("Handler", (_Handler,), {"verifiers": verifiers, "show_body": args.body})
    try:
        server = ThreadingHTTPServer((args.host, args.port), handler)
    except OSError as exc:
        print(f"error: cannot listen on {args.host}:{args.port} ({exc.strerror})", file=sys.stderr)
        return 1
    print(f"Receiving webhooks at http://{args.host}:{args.port}/ (any path); Ctrl-C stops.", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


class _Handler(BaseHTTPRequestHandler):
    verifiers: list[Webhook] = []
    show_body = False

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        """Anyone may ask whether it listens (the README waits for this before going on)."""
        self._answer(200, {"receiver": "listening; POST deliveries here"})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        if not 0 <= length <= MAX_BODY:
            self._answer(413, {"error": "too large"})
            return
        body = self.rfile.read(length)
        headers = {name.lower(): value for name, value in self.headers.items()}
        verified = any(_verifies(verifier, body, headers) for verifier in self.verifiers)
        event = _json(body)
        line = (
            f"{'verified' if verified else 'NOT VERIFIED (signed with another secret: an endpoint registered earlier?)'}"
            f"  {event.get('type', '?')}  event {headers.get('x-service-event-id', '?')}"
            f"  attempt {headers.get('x-service-attempt', '?')}  {self.path}"
        )
        print(line, flush=True)
        if self.show_body:
            print(json.dumps(event, indent=2), flush=True)
        self._answer(200 if verified else 401, {"received": verified})

    def _answer(self, status: int, payload: dict[str, object]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # the one line above says it all
        return


def _verifies(verifier: Webhook, body: bytes, headers: dict[str, str]) -> bool:
    try:
        verifier.verify(body, headers)
        return True
    except WebhookVerificationError:
        return False


def _json(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
