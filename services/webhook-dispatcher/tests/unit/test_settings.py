"""The dispatcher's settings: the worker's health and metrics server is off unless its port is set,
and the port is validated with the other settings."""

import pytest

from dps_common.crypto import new_key
from dps_common.messaging import DEFAULT_AMQP_URL
from dps_common.settings import SettingsError

from dps_webhooks.settings import Settings

REQUIRED = {
    "DATABASE_URL": "postgresql://u@h/db",
    "CURSOR_SECRET": "c" * 32,
    "WEBHOOK_SECRET_KEY": new_key(),
    "API_URL": "https://api.example",
    "INTERNAL_API_TOKEN": "t" * 32,
}


def test_the_metrics_server_is_off_by_default():
    settings = Settings.from_env(REQUIRED)
    assert (settings.metrics_port, settings.metrics_host) == (0, "0.0.0.0")


def test_the_metrics_port_and_host_are_read():
    settings = Settings.from_env(
        {**REQUIRED, "WEBHOOK_WORKER_METRICS_PORT": "9100", "WEBHOOK_WORKER_METRICS_HOST": "127.0.0.1"}
    )
    assert (settings.metrics_port, settings.metrics_host) == (9100, "127.0.0.1")


@pytest.mark.parametrize(
    ("port", "problem"),
    [("65536", "between 0 and 65535"), ("-1", "between 0 and 65535"), ("http", "an integer")],
)
def test_a_bad_metrics_port_is_refused(port, problem):
    with pytest.raises(SettingsError, match=f"WEBHOOK_WORKER_METRICS_PORT must be {problem}"):
        Settings.from_env({**REQUIRED, "WEBHOOK_WORKER_METRICS_PORT": port})


def test_the_shared_settings_keep_the_dispatchers_defaults():
    """AMQP_URL has a default here (the consumer needs a broker), unlike the services that only drop
    revoked keys on key events; API_URL is checked like everywhere else."""
    settings = Settings.from_env(REQUIRED)
    assert (settings.amqp_url, settings.api_url, settings.db_pool_size) == (DEFAULT_AMQP_URL, "https://api.example", 5)
    with pytest.raises(SettingsError, match="API_URL must be an http"):
        Settings.from_env({**REQUIRED, "API_URL": "api.example"})
