"""The console as deployed: gunicorn with the production settings over TLS (``dps_console.wsgi``),
ready when its database answers, its metrics scraped, JSON logs, and a start refused with every
missing setting named."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import requests

from dps_testing.processes import gunicorn


def test_gunicorn_serves_the_console_with_health_and_metrics(settings_env, tls_files, tmp_path):
    env = {**os.environ, **settings_env, "LOG_LEVEL": "INFO"}
    log = tmp_path / "console.log"
    with gunicorn("dps_console.wsgi:create()", env, tls_files, log, workers=1) as origin:
        page = requests.get(origin + "/console/sign-in", verify=tls_files["ca"], timeout=10)
        assert page.status_code == 200 and "<h1>Sign in</h1>" in page.text
        assert requests.get(origin + "/console/healthz", verify=tls_files["ca"], timeout=10).status_code == 200
        metrics = requests.get(origin + "/metrics", verify=tls_files["ca"], timeout=10)
        assert 'dps_http_requests_total{method="GET",route="/console/sign-in",service="console",status="200"}' in metrics.text
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    assert any(line.get("message") == "request" and line.get("route") == "/console/sign-in" for line in lines)


def test_a_start_without_settings_names_each_missing_one():
    done = subprocess.run(
        [sys.executable, "-c", "from dps_console.wsgi import create; create()"],
        env={"PATH": os.environ.get("PATH", "")}, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode != 0
    for name in ("DATABASE_URL", "API_URL", "CONSOLE_API_TOKEN", "SMTP_URL", "CONSOLE_PUBLIC_URL", "CONSOLE_SECRET_KEY"):
        assert name in done.stderr
