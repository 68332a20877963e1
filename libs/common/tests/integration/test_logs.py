"""Every JSON log line carries ``time`` in ISO 8601 UTC with milliseconds (``2026-11-24T10:11:12.345Z``)
whatever the host's time zone: the CLIs, workers and relays (``dps_common.logs.configure``) and gunicorn,
master and workers (``dps_common.gunicorn_conf``'s ``logconfig_dict``), each in a real process; and
names its ``service`` and ``process`` kind (gunicorn's master too), and the bound ``requestId``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dps_testing.processes import free_port

ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
# A POSIX zone 5 h 45 min east of UTC (no tz database needed): local time would show in every line.
FAR_FROM_UTC = {"TZ": "NPT-5:45"}

APP = '''
import logging

from dps_common import logs

from utc_service import SERVICE


def create():
    logs.configure(service=SERVICE, process="http")  # as each service's wsgi.create does in the worker
    logging.getLogger("test.app").info("app created")

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    return app
'''


def assert_utc_lines(lines: list[str], started: datetime) -> list[dict]:
    records = [json.loads(line) for line in lines]
    for record in records:
        assert ISO_UTC.match(record["time"]), record
        logged = datetime.strptime(record["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        # The same instant as the clock's UTC (a local 5:45 offset would be hours away).
        assert started - timedelta(minutes=1) <= logged <= datetime.now(UTC) + timedelta(minutes=1), record
        assert {"level", "logger", "message"} <= set(record), record
    return records


def test_configure_writes_iso_8601_utc_times_whatever_the_time_zone():
    started = datetime.now(UTC)
    script = "import logging; from dps_common import logs; logs.configure(service='s', process='cli'); logging.getLogger('t').info('hello')"
    out = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, **FAR_FROM_UTC}, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    [record] = assert_utc_lines(out.stdout.splitlines(), started)
    assert (record["level"], record["logger"], record["message"]) == ("INFO", "t", "hello")


def test_every_gunicorn_line_master_and_worker_has_an_iso_8601_utc_time(tmp_path: Path):
    (tmp_path / "utc_service").mkdir()
    (tmp_path / "utc_service" / "__init__.py").write_text('SERVICE = "utc-test"\n')
    (tmp_path / "utc_service" / "wsgi.py").write_text(APP)
    env = {
        **os.environ,
        **FAR_FROM_UTC,
        "HOST": "127.0.0.1",
        "PORT": str(free_port()),
        "WEB_CONCURRENCY": "1",
        "PYTHONPATH": str(tmp_path),
    }
    gunicorn = Path(sys.executable).with_name("gunicorn")
    started = datetime.now(UTC)
    server = subprocess.Popen(
        [str(gunicorn), "-c", "python:dps_common.gunicorn_conf", "utc_service.wsgi:create()"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    try:
        assert server.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "app created" in line:
                break
    finally:
        server.send_signal(signal.SIGTERM)
        rest, errors = server.communicate(timeout=60)
    lines += rest.splitlines()
    records = assert_utc_lines([line for line in lines if line.strip()], started)
    loggers = {record["logger"] for record in records}
    assert {"gunicorn.error", "test.app"} <= loggers, (records, errors)
    assert any(record["message"].startswith("Booting worker") for record in records), records
    # the master's lines (started, worker booted) and the worker's name the service and the kind
    assert {(record["service"], record["process"]) for record in records} == {("utc-test", "http")}, records


def test_lines_name_the_service_the_process_kind_and_the_bound_request_id():
    script = """
import logging, threading
from dps_common import logs, request_id
logs.configure(service="webhook-dispatcher", process="delivery-worker")
log = logging.getLogger("t")
log.info("plain")
with request_id.bound("abc"):
    log.info("in a request")
    log.info("naming its own", extra={"requestId": "other"})
def consume():
    with logs.kind("event-consumer"):
        log.info("consumer line")
thread = threading.Thread(target=consume)
thread.start()
thread.join()
log.info("after")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    records = {record["message"]: record for record in map(json.loads, out.stdout.splitlines())}
    assert {(r["service"], r["process"]) for r in records.values()} == {
        ("webhook-dispatcher", "delivery-worker"), ("webhook-dispatcher", "event-consumer")
    }
    assert records["consumer line"]["process"] == "event-consumer"
    assert records["after"]["process"] == "delivery-worker"
    assert "requestId" not in records["plain"] and "requestId" not in records["after"]
    assert records["in a request"]["requestId"] == "abc"
    assert records["naming its own"]["requestId"] == "other"
