"""Which app gunicorn serves under the production settings (``dps_common.gunicorn_conf``): the images
name no app on their command line (deploy/service.Dockerfile's exec-form CMD) and set ``DPS_WSGI_APP``
(gunicorn's ``wsgi_app``) instead; without it the app argument serves as before, and an argument wins
over the variable (a Kubernetes command names its app in an image that sets it). A real gunicorn each."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from dps_testing.processes import free_port

APP = '''
def create(name):
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [name.encode()]

    return app
'''


def serve(tmp_path: Path, arguments: list[str], wsgi_app: str | None) -> tuple[str, list[dict]]:
    """The body gunicorn answers ``/`` with, and its log records (the master's included)."""
    (tmp_path / "named_service").mkdir()
    (tmp_path / "named_service" / "__init__.py").write_text('SERVICE = "named-test"\n')
    (tmp_path / "named_service" / "wsgi.py").write_text(APP)
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key != "DPS_WSGI_APP"}
    env.update({"HOST": "127.0.0.1", "PORT": str(port), "WEB_CONCURRENCY": "1", "PYTHONPATH": str(tmp_path)})
    if wsgi_app is not None:
        env["DPS_WSGI_APP"] = wsgi_app
    gunicorn = Path(sys.executable).with_name("gunicorn")
    server = subprocess.Popen([str(gunicorn), "-c", "python:dps_common.gunicorn_conf", *arguments], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    body = ""
    try:
        deadline = time.monotonic() + 60
        while not body and server.poll() is None and time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as response:
                    body = response.read().decode()
            except OSError:
                time.sleep(0.2)
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=60)
    assert body, output
    return body, [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.mark.parametrize(("arguments", "wsgi_app", "served"), [
    ([], "named_service.wsgi:create('from the variable')", "from the variable"),
    (["named_service.wsgi:create('from the argument')"], None, "from the argument"),
    (["named_service.wsgi:create('from the argument')"], "named_service.wsgi:create('from the variable')",
     "from the argument"),
], ids=["variable-only", "argument-only", "argument-wins"])
def test_gunicorn_serves_the_app_its_command_line_or_dps_wsgi_app_names(tmp_path, arguments, wsgi_app, served):
    body, records = serve(tmp_path, arguments, wsgi_app)
    assert body == served
    # the master names the service from whichever names the app (dps_common.gunicorn_conf)
    master = [record for record in records if record["logger"] == "gunicorn.error"]
    assert master and {record.get("service") for record in master} == {"named-test"}, records


def test_without_an_app_argument_or_the_variable_gunicorn_refuses_to_start(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "DPS_WSGI_APP"}
    done = subprocess.run([str(Path(sys.executable).with_name("gunicorn")), "-c", "python:dps_common.gunicorn_conf"],
                          env={**env, "PORT": str(free_port())}, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "No application module specified" in done.stdout + done.stderr
