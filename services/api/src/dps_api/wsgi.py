"""gunicorn entry point: ``gunicorn 'dps_api.wsgi:create()'``."""

from dps_common.bootstrap import start_process
from dps_common.http.app import ServiceApp

from dps_api import SERVICE
from dps_api.app import create_app
from dps_api.settings import Settings


def create() -> ServiceApp:
    settings = start_process(Settings.from_env, SERVICE, "http")
    return create_app(settings, key_events=True)  # this worker's own subscription, after the fork
