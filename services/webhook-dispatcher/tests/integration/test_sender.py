"""One attempt against a real HTTPS receiver: what each kind of answer gives, the deadline however
slowly the receiver drips, the bounded read, TLS verification and the URL check before sending."""

import ipaddress
import socket
import threading
import uuid

import pytest

from dps_testing.webhook_receiver import DRIP_BODY, HUGE_BYTES, Receiver

from dps_webhooks.adapters import watchdog
from dps_webhooks.adapters.sender import EXCERPT_BYTES, Sender
from dps_webhooks.adapters.signing import delivery_headers
from dps_webhooks.adapters.signing_secrets import new_signing_secret

LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))
TIMEOUT = 2.0
BODY = '{"id": "evt", "type": "quote.approved"}'
SECRET = new_signing_secret()


@pytest.fixture(scope="module")
def receiver(tls_files):
    with Receiver(tls_files, SECRET) as receiver:
        yield receiver


@pytest.fixture(scope="module")
def sender(tls_files):
    return Sender(TIMEOUT, LOOPBACK, tls_files["ca"])


def send(sender, url, body=BODY):
    headers = delivery_headers(secret=SECRET, event_id=uuid.uuid4(), delivery_id=uuid.uuid4(), attempt=1, body=body)
    return sender.send(url, body.encode(), headers)


def test_a_2xx_answer_succeeds_with_its_excerpt_and_the_request_is_verified(sender, receiver):
    result = send(sender, receiver.url("/ok-1", host="localhost"))
    assert (result.status, result.excerpt, result.error, result.succeeded) == (200, '{"received": true}', None, True)
    [request] = receiver.requests_to("/ok-1")
    assert request.verified and request.body == BODY.encode()
    assert request.headers["host"] == f"localhost:{receiver.port}"


def test_a_kept_connection_is_reused_for_the_next_attempt(sender, receiver):
    for _ in range(3):
        assert send(sender, receiver.url("/ok-2")).succeeded
    ports = {request.client_port for request in receiver.requests_to("/ok-2")}
    assert len(ports) == 1


@pytest.mark.parametrize(
    ("path", "status", "message"),
    [
        ("/500", 500, "The receiver answered 500; only 2xx counts as delivered."),
        ("/410", 410, "The receiver answered 410; only 2xx counts as delivered."),
        ("/302", 302, "The receiver answered 302; redirects are not followed."),
    ],
)
def test_other_statuses_fail(sender, receiver, path, status, message):
    result = send(sender, receiver.url(path))
    assert (result.status, result.succeeded, result.error_message) == (status, False, message)


def test_a_redirect_is_not_followed(sender, receiver):
    before = len(receiver.requests_to("/ok"))
    result = send(sender, receiver.url("/redirect"))
    assert result.status == 302 and not result.succeeded
    assert len(receiver.requests_to("/redirect")) >= 1
    assert len(receiver.requests_to("/ok")) == before  # the Location was never visited


def test_a_receiver_that_never_answers_times_out_at_the_deadline(sender, receiver):
    result = send(sender, receiver.url("/hang"))
    assert (result.status, result.error) == (None, "Timed out after 2 s.")
    assert receiver.requests_to("/hang")


def test_a_receiver_dripping_a_byte_a_second_is_cut_at_the_deadline(sender, receiver):
    result = send(sender, receiver.url("/drip"))
    assert (result.status, result.error) == (None, "Timed out after 2 s.")


def test_an_answer_whose_body_drips_past_the_deadline_is_a_timeout_not_a_success(sender, receiver):
    result = send(sender, receiver.url("/drip-body"))  # 200 and its headers at once, then a byte a second
    assert (result.status, result.succeeded) == (200, False)
    assert result.error == result.error_message == "Timed out after 2 s reading the response body."
    assert DRIP_BODY.decode().startswith(result.excerpt) and len(result.excerpt) < len(DRIP_BODY)
    assert 2_000 <= result.duration_ms < 5_000


def test_an_answer_cut_short_of_its_declared_length_fails(sender, receiver):
    result = send(sender, receiver.url("/short-body"))
    assert (result.status, result.succeeded) == (None, False)
    assert result.error == "The receiver closed the connection before the end of its answer."


def test_a_reset_connection_fails_with_its_reason(sender, receiver):
    result = send(sender, receiver.url("/reset"))
    assert (result.status, result.error) == (None, "The receiver reset the connection.")


def test_only_the_excerpt_of_a_50_mb_answer_is_read(sender, receiver):
    result = send(sender, receiver.url("/huge"))
    assert result.succeeded and result.status == 200
    assert result.excerpt == "x" * EXCERPT_BYTES
    receiver.wait_for(1, "/huge")
    assert receiver.huge_bytes_sent < HUGE_BYTES // 2  # the rest was refused, not downloaded


def test_a_binary_excerpt_is_kept_as_text(sender, receiver):
    receiver.answer("/binary", (200, b"\x00\xff\xfeok"))
    result = send(sender, receiver.url("/binary"))
    assert result.excerpt == "\ufffd\ufffd\ufffdok"


def test_a_certificate_for_another_name_fails_tls_with_one_clear_message(sender, receiver):
    result = send(sender, receiver.url("/ok", host="127.1"))  # 127.0.0.1, but not a name the certificate has
    assert result.status is None
    assert result.error == "TLS error: Hostname mismatch, certificate is not valid for '127.1'."


def test_an_untrusted_certificate_fails_tls(receiver):
    result = send(Sender(TIMEOUT, LOOPBACK), receiver.url("/ok"))  # the test CA is not trusted here
    assert result.status is None and result.error.startswith("TLS error: ")
    assert "certificate" in result.error


def test_a_closed_port_is_refused():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = Sender(TIMEOUT, LOOPBACK).send(f"https://127.0.0.1:{port}/", b"{}", {})
    assert (result.status, result.error) == (None, "Connection refused.")


def test_a_url_refused_at_attempt_time_sends_nothing(receiver, tls_files):
    no_allowlist = Sender(TIMEOUT, (), tls_files["ca"])
    result = send(no_allowlist, receiver.url("/never", host="localhost"))
    assert result.status is None
    assert result.error == "The URL was refused: host resolves to a loopback address (127.0.0.1)."
    assert receiver.requests_to("/never") == []


def test_the_watchdog_cuts_a_blocked_read_at_its_deadline():
    left, right = socket.socketpair()
    with left, right:
        cutoff = watchdog.arm(0.2)
        cutoff.attach(left)
        got = []
        reader = threading.Thread(target=lambda: got.append(left.recv(10)))
        reader.start()
        reader.join(timeout=5)
        assert not reader.is_alive() and got == [b""] and cutoff.expired


def test_a_released_cutoff_leaves_the_socket_alone():
    left, right = socket.socketpair()
    with left, right:
        cutoff = watchdog.arm(0.05)
        cutoff.attach(left)
        cutoff.release()
        later = watchdog.arm(0.3)  # once this one fired, the first one's deadline has long passed
        threading.Event().wait(0.5)
        assert later.expired and not cutoff.expired
        right.sendall(b"still open")
        assert left.recv(10) == b"still open"


def test_a_stalled_dns_lookup_ends_with_the_attempt_deadline(tls_files, monkeypatch):
    answer = threading.Event()

    def stalled_getaddrinfo(host, port, *args, **kwargs):
        answer.wait(30)  # a DNS server that does not answer (released when the test ends)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", stalled_getaddrinfo)
    try:
        result = send(Sender(1.0, LOOPBACK, tls_files["ca"]), "https://stalled.example/hook")
    finally:
        answer.set()
    assert (result.status, result.error) == (None, "Timed out after 1 s resolving the host.")
    assert result.duration_ms < 5_000  # bounded by the attempt's deadline, not by the stalled lookup
