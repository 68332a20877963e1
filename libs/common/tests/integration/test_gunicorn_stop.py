"""A Ctrl-C stops a service's gunicorn (the production settings, ``dps_common.gunicorn_conf``) without a
traceback: the terminal's SIGINT reaches the master and its workers at once, and the master passes
SIGQUIT on. gunicorn's gevent worker used to end that with ``sys.exit`` in a greenlet that often ran
once the worker was already exiting, where gevent printed the ``SystemExit`` and cut an atexit hook
(a subscriber's stop) short. A real gunicorn, its app with a background thread joined at exit as the
key-event subscriber's is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from dps_testing.processes import free_port

APP = '''
import atexit, threading

def create():
    stop = threading.Event()
    thread = threading.Thread(target=lambda: stop.wait(60), daemon=True)

    def halt():
        stop.set()
        thread.join(2)
        print("atexit hook done", flush=True)

    thread.start()
    atexit.register(halt)

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]

    return app
'''


def test_ctrl_c_to_the_group_stops_gunicorn_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "stopping_service").mkdir()
    (tmp_path / "stopping_service" / "__init__.py").write_text('SERVICE = "stopping-test"\n')
    (tmp_path / "stopping_service" / "wsgi.py").write_text(APP)
    port = free_port()
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(port), "WEB_CONCURRENCY": "2",
           "PYTHONPATH": str(tmp_path)}
    env.pop("DPS_WSGI_APP", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:dps_common.gunicorn_conf", "stopping_service.wsgi:create()"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as answer:
                    assert answer.read() == b"ok"
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.communicate()[0]
                time.sleep(0.2)
        time.sleep(2)  # both workers booted: the signal finds them serving, as a Ctrl-C finds make run
        os.killpg(server.pid, signal.SIGINT)  # the terminal's Ctrl-C: master and workers alike
        output, _ = server.communicate(timeout=60)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    assert server.returncode == 0, output
    assert "Traceback" not in output and "failed with SystemExit" not in output, output
    assert output.count("atexit hook done") == 2, output  # each worker ran its hooks to the end
