"""The development sender (WEBHOOK_ALLOW_INSECURE_LOOPBACK): a real plain-HTTP receiver on loopback gets
the signed POST; refusals and failures read as they do over HTTPS; the production sender refuses it."""

import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks import Webhook

from dps_webhooks.adapters.loopback import LoopbackSender
from dps_webhooks.adapters.sender import Sender
from dps_webhooks.adapters.signing import delivery_headers
from dps_webhooks.adapters.signing_secrets import new_signing_secret

SECRET = new_signing_secret()
BODY = '{"id": "evt", "type": "quote.approved"}'


class _Receiver(BaseHTTPRequestHandler):
    received: list[tuple[str, dict[str, str], bytes]] = []

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["content-length"]))
        _Receiver.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        status = 500 if self.path == "/fail" else 200
        self.send_response(status)
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def receiver():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def send(sender, url):
    headers = delivery_headers(secret=SECRET, event_id=uuid.uuid4(), delivery_id=uuid.uuid4(), attempt=1, body=BODY)
    return sender.send(url, BODY.encode(), headers)


def test_a_plain_http_receiver_on_loopback_gets_the_signed_delivery(receiver):
    result = send(LoopbackSender(2.0), f"http://localhost:{receiver}/hooks?x=1")
    assert (result.status, result.excerpt, result.error, result.succeeded) == (200, "ok", None, True)
    path, headers, body = _Receiver.received[-1]
    assert (path, body, headers["host"]) == ("/hooks?x=1", BODY.encode(), f"localhost:{receiver}")
    Webhook(SECRET).verify(body, headers)  # raises unless the signature holds


def test_its_failures_read_as_over_https(receiver):
    sender = LoopbackSender(2.0)
    assert send(sender, f"http://127.0.0.1:{receiver}/fail").status == 500
    with_nobody = send(sender, "http://127.0.0.1:9/hooks")  # the discard port: nothing listens
    assert (with_nobody.status, with_nobody.error) == (None, "Connection refused.")
    elsewhere = send(sender, "http://8.8.8.8/hooks")
    assert elsewhere.error is not None and "plain http is allowed to loopback addresses only" in elsewhere.error


def test_the_production_sender_refuses_plain_http(receiver):
    result = send(Sender(2.0), f"http://127.0.0.1:{receiver}/hooks")
    assert (result.status, result.error) == (None, "The URL was refused: must use https.")
