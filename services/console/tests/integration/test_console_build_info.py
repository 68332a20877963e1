"""The console's build info on its ``/metrics`` as deployed (gunicorn, two workers, multiprocess mode):
``dps_build_info`` names the service, the version of its distribution and the commit of
``BUILD_COMMIT``, once, whichever worker answers."""

from __future__ import annotations

import os
from importlib import metadata

import requests
from prometheus_client.parser import text_string_to_metric_families

from dps_testing.processes import gunicorn


def test_the_build_info_names_the_console_its_version_and_its_commit(settings_env, tls_files, tmp_path):
    env = {**os.environ, **settings_env, "BUILD_COMMIT": "c0ffee42"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)  # the server's own, as deployed
    with gunicorn("dps_console.wsgi:create()", env, tls_files, tmp_path / "console.log", workers=2) as origin:
        scrapes = [requests.get(origin + "/metrics", verify=tls_files["ca"], timeout=10) for _ in range(4)]
    for scrape in scrapes:  # each worker's answer
        assert scrape.status_code == 200
        build = [
            (sample.labels, sample.value)
            for family in text_string_to_metric_families(scrape.text)
            for sample in family.samples
            if sample.name == "dps_build_info"
        ]
        expected = {"service": "console", "version": metadata.version("dps-console"), "commit": "c0ffee42"}
        assert build == [(expected, 1.0)]
