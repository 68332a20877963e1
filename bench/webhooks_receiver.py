"""The webhook bench's receiver: answers 204 to every POST and writes down what arrived and when.

Served by gunicorn over TLS in its own processes (not sharing the bench's GIL). Each gunicorn
worker appends ``<X-Service-Event-Id> <time.time()>`` lines to its own file in
``BENCH_ARRIVALS_DIR`` (no lock between processes), flushed per request so the bench sees each
arrival as soon as it is answered. The body is read (a real receiver would) but not verified:
signatures are the tests' business, not the bench's.
"""

from __future__ import annotations

import os
import threading
import time

_DIR = os.environ.get("BENCH_ARRIVALS_DIR", ".")
_lock = threading.Lock()  # gthread: one file per process, shared by its threads
_files: dict[int, object] = {}


def _file():
    pid = os.getpid()  # gunicorn forks after import: open per worker, not at import
    f = _files.get(pid)
    if f is None:
        f = _files[pid] = open(os.path.join(_DIR, f"arrivals-{pid}.log"), "a", buffering=1)
    return f


def app(environ, start_response):
    if environ["REQUEST_METHOD"] == "POST":
        length = int(environ.get("CONTENT_LENGTH") or 0)
        environ["wsgi.input"].read(length)
        arrived = time.time()  # the whole request is in
        event_id = environ.get("HTTP_X_SERVICE_EVENT_ID", "-")
        with _lock:
            _file().write(f"{event_id} {arrived:.6f}\n")
        start_response("204 No Content", [])
        return []
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "2")])
    return [b"ok"]
