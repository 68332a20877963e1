"""gunicorn entry point: ``gunicorn 'dps_api.wsgi:create()'``."""

from dps_common.bootstrap import start_process
from dps_common.http.app import ServiceApp

from dps_api import SERVICE
from dps_api.composition import build_http
from dps_api.settings import Settings


def create() -> ServiceApp:
    settings = start_process(Settings.from_env, SERVICE, "http")
    return build_http(settings, key_events=True)  # this worker's own subscription, after the fork
