"""A real api for the suites of the services that call it (the dispatcher's key checks, the console's
sign-in and keys): its own database, migrated with its command line, and the api itself under
gunicorn. Those suites import none of the api's code: the command line is its console script
(``dps_testing.provisioning``), the server the process a deployment runs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dps_testing.processes import gunicorn
from dps_testing.provisioning import Admin
from dps_testing.services import fresh_database

API_APP = "dps_api.wsgi:create()"  # what the api's image gives gunicorn


@contextmanager
def api_database(name: str, **settings: str) -> Iterator[dict[str, str]]:
    """The api's environment on a fresh database (named after ``name``) migrated to head by
    ``dealpricing-admin migrate``: this process's environment, a key cache of 1 s and WARNING logs
    unless ``settings`` say otherwise, and ``settings`` (``API_KEY_PEPPER``, ``INTERNAL_API_TOKEN``, ...)."""
    with fresh_database(name) as url:
        env = {**os.environ, "KEY_CACHE_TTL_SECONDS": "1", "LOG_LEVEL": "WARNING", **settings, "DATABASE_URL": url}
        Admin(env).migrate()
        yield env


@contextmanager
def api_server(env: dict[str, str], tls_files: dict[str, str], log_path: Path, *, workers: int = 1) -> Iterator[str]:
    """The api under gunicorn (production settings, TLS) on ``env``; yields its origin."""
    with gunicorn(API_APP, env, tls_files, log_path, workers=workers) as origin:
        yield origin
