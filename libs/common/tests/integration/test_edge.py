"""The server edge's parts on their own: read deadlines on a real socket pair, the server's problem
answers, the metrics directory, and what gunicorn's master may import (the app's suites run the
whole edge under real gunicorn once, on a minimal app: ``test_edge_server.py``)."""

import json
import socket
import subprocess
import sys
import time

import pytest

from dps_common.edge import metrics, problems
from dps_common.edge.reading import DeadlineReader, ReadTimeouts, RequestTimedOut


def test_timeouts_come_from_the_environment_and_are_checked():
    assert ReadTimeouts.from_env({}) == ReadTimeouts(5.0, 5.0, 60.0)
    assert ReadTimeouts.from_env({"HTTP_HEADER_TIMEOUT_SECONDS": "2.5"}).header_seconds == 2.5
    with pytest.raises(ValueError, match="HTTP_BODY_TIMEOUT_SECONDS"):
        ReadTimeouts.from_env({"HTTP_BODY_TIMEOUT_SECONDS": "0"})


def test_a_head_that_drips_is_cut_off_at_its_total_deadline_not_per_read():
    server, client = socket.socketpair()
    with server, client:
        reader = DeadlineReader(server, ReadTimeouts(header_seconds=0.6, body_idle_seconds=5, body_seconds=5))
        reader.expect_head()
        started = time.monotonic()
        with pytest.raises(RequestTimedOut) as caught:
            while True:  # a byte every 0.2 s keeps every read short, but not the head
                client.sendall(b"X")
                reader.recv(1)
                time.sleep(0.2)
        assert caught.value.phase == "head"
        assert reader.received >= 2 and bytes(reader.head).startswith(b"XX")
        assert time.monotonic() - started < 5


def test_a_body_that_stops_times_out_after_its_idle_limit():
    server, client = socket.socketpair()
    with server, client:
        reader = DeadlineReader(server, ReadTimeouts(header_seconds=5, body_idle_seconds=0.3, body_seconds=5))
        reader.expect_body()
        client.sendall(b"{")
        assert reader.recv(10) == b"{"
        with pytest.raises(RequestTimedOut) as caught:
            reader.recv(10)
        assert caught.value.phase == "body" and isinstance(caught.value, TimeoutError)
        assert reader.head == b""  # only heads are kept


def test_a_server_problem_is_a_complete_closing_response():
    raw = problems.uri_too_long(4094).response("abc123")
    head, body = raw.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 414 URI Too Long"
    assert {"Content-Type: application/problem+json", "Connection: close", "X-Request-Id: abc123",
            f"Content-Length: {len(body)}"} <= set(lines)
    document = json.loads(body)
    assert document == {
        "type": "https://errors.dealpricing.example/uri_too_long", "title": "URI too long", "status": 414,
        "detail": "The request line exceeds the 4094-byte limit.", "code": "uri_too_long", "requestId": "abc123",
    }


def test_the_header_over_the_limit_is_told_apart():
    long_key = b"GET / HTTP/1.1\r\nHost: x\r\nX-API-Key: dps_" + b"k" * 9000
    assert problems.api_key_too_long(long_key, 8190)
    assert not problems.api_key_too_long(b"GET / HTTP/1.1\r\nx-api-key: dps_abc\r\nX-Filler: " + b"f" * 9000, 8190)


def test_prepare_empties_a_given_directory_of_metric_files_only(tmp_path):
    (tmp_path / "counter_123.db").write_bytes(b"old")
    (tmp_path / "notes.txt").write_text("not ours")
    environ = {metrics.DIRECTORY_ENV: str(tmp_path)}
    assert metrics.prepare(environ) == tmp_path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    metrics.finish(environ)
    assert tmp_path.is_dir()  # a given directory stays


def test_prepare_makes_a_directory_of_its_own_and_finish_removes_it():
    environ: dict[str, str] = {}
    directory = metrics.prepare(environ)
    assert environ[metrics.DIRECTORY_ENV] == str(directory) and directory.is_dir()
    metrics.finish(environ)
    assert not directory.exists()


def test_gunicorns_master_does_not_load_prometheus_client_before_the_hooks_set_the_directory():
    """prometheus_client picks single- or multi-process values when first imported, and the workers
    inherit the master's modules: the config and the worker class must not import it."""
    code = (
        "import sys, dps_common.gunicorn_conf, dps_common.edge.worker; "
        "print('prometheus_client' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("raw", "detail"),
    [
        (b"400\r\n{}", "the connection ended before the body did"),  # announces 1 KB, the client stops at 2 bytes
        (b"zz\r\n{}\r\n0\r\n\r\n", "a chunk size is not a hexadecimal number"),
        (b"2\r\n{}XX0\r\n\r\n", "a chunk does not end with CRLF"),
    ],
    ids=["truncated", "bad-chunk-size", "missing-terminator"],
)
def test_the_workers_body_stream_raises_a_broken_chunked_body_as_malformed(raw, detail):
    """What the app reads under gunicorn: the framing errors are ``MalformedBody`` (the app's 400), not
    gunicorn's own exceptions (an unhandled error, 500)."""
    from gunicorn.http.body import Body, ChunkedReader
    from gunicorn.http.unreader import IterUnreader

    from dps_common.edge.reading import MalformedBody
    from dps_common.edge.worker import _BodyInput

    stream = _BodyInput(Body(ChunkedReader(object(), IterUnreader([raw]))))
    with pytest.raises(MalformedBody, match=detail):
        stream.read()


def test_the_workers_body_stream_reads_a_good_chunked_body():
    from gunicorn.http.body import Body, ChunkedReader
    from gunicorn.http.unreader import IterUnreader

    from dps_common.edge.worker import _BodyInput

    stream = _BodyInput(Body(ChunkedReader(object(), IterUnreader([b"2\r\n{}\r\n3\r\n[1]\r\n0\r\n\r\n"]))))
    assert stream.read(3) == b"{}[" and stream.read() == b"1]" and stream.read() == b""


def test_the_worker_freezes_the_loaded_app_and_collects_the_young_generation_less_often(tmp_path):
    """Under real gunicorn: the app's objects are frozen once it is built, and the youngest generation's
    threshold leaves room for the requests in flight (a collection stops every request of the worker)."""
    import gc
    import http.client

    from dps_common.edge.worker import GC_GEN0_THRESHOLD

    (tmp_path / "gc_app.py").write_text(
        "import gc, json\n"
        "def app(environ, start_response):\n"
        "    body = json.dumps({'threshold': gc.get_threshold()[0], 'frozen': gc.get_freeze_count()}).encode()\n"
        "    start_response('200 OK', [('Content-Type', 'application/json'), ('Content-Length', str(len(body)))])\n"
        "    return [body]\n"
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--worker-class", "dps_common.edge.worker.EdgeWorker", "--workers", "1",
         "--bind", f"127.0.0.1:{port}", "--chdir", str(tmp_path), "--no-control-socket", "gc_app:app"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                conn.request("GET", "/")
                answer = json.loads(conn.getresponse().read())
                conn.close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "gunicorn did not start"
                time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert GC_GEN0_THRESHOLD > gc.get_threshold()[0] == 700  # this process keeps CPython's default
    assert answer["threshold"] == GC_GEN0_THRESHOLD
    assert answer["frozen"] > 1000  # gevent, gunicorn and the app's modules
