"""WEBHOOK_ALLOW_INSECURE_LOOPBACK: plain http:// to a loopback receiver, for development only. The
setting is refused outside DPS_ENVIRONMENT=development, and with it nothing but http-to-loopback is
relaxed."""

import logging
import uuid

import pytest

from dps_common.settings import SettingsError

from dps_webhooks.adapters.url_guard import Target, UrlRefused, vet_url
from dps_webhooks.domain.attempt_outcome import AttemptResult, DeliveryStatus, EndpointEffect, Outcome
from dps_webhooks.domain.claims import Claimed
from dps_webhooks.services.attempts import log_attempt
from dps_webhooks.services.recording import Finished
from dps_webhooks.settings import Settings


def test_the_setting_is_refused_in_production_and_without_an_environment(make_settings):
    for environment in ({}, {"DPS_ENVIRONMENT": "production"}):
        with pytest.raises(SettingsError, match="WEBHOOK_ALLOW_INSECURE_LOOPBACK is a development setting"):
            make_settings(WEBHOOK_ALLOW_INSECURE_LOOPBACK="true", **environment)


def test_the_setting_is_honoured_in_development_and_off_by_default(make_settings):
    assert make_settings(WEBHOOK_ALLOW_INSECURE_LOOPBACK="true", DPS_ENVIRONMENT="development").allow_insecure_loopback
    assert not make_settings(DPS_ENVIRONMENT="development").allow_insecure_loopback
    assert not make_settings().allow_insecure_loopback


def test_bad_values_are_named(make_settings):
    with pytest.raises(SettingsError) as error:
        make_settings(WEBHOOK_ALLOW_INSECURE_LOOPBACK="yes", DPS_ENVIRONMENT="staging")
    assert "WEBHOOK_ALLOW_INSECURE_LOOPBACK must be true or false" in str(error.value)
    assert "DPS_ENVIRONMENT must be production or development" in str(error.value)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9000/hooks", "http://localhost:9000/", "http://[::1]/h", "http://127.1/"])
def test_plain_http_to_loopback_is_allowed_only_when_asked(url):
    with pytest.raises(UrlRefused, match="must use https"):
        vet_url(url)
    target = vet_url(url, insecure_loopback=True)
    assert target.scheme == "http" and target.address in ("127.0.0.1", "::1")


def test_plain_http_anywhere_else_stays_refused():
    for url in ("http://8.8.8.8/hook", "http://10.0.0.1/hook", "http://169.254.169.254/latest"):
        with pytest.raises(UrlRefused, match="plain http is allowed to loopback addresses only"):
            vet_url(url, insecure_loopback=True)
    with pytest.raises(UrlRefused, match="must use https"):
        vet_url("ftp://127.0.0.1/", insecure_loopback=True)


def test_https_is_judged_as_always_with_the_setting():
    with pytest.raises(UrlRefused, match="loopback"):
        vet_url("https://127.0.0.1/hook", insecure_loopback=True)  # loopback over https needs the allowlist
    assert vet_url("https://8.8.8.8/hook", insecure_loopback=True).scheme == "https"


def test_the_host_header_leaves_out_each_schemes_default_port():
    assert Target("localhost", 80, "/", "127.0.0.1", "http").authority == "localhost"
    assert Target("localhost", 443, "/", "127.0.0.1", "http").authority == "localhost:443"
    assert Target("example.com", 443, "/", "8.8.8.8").authority == "example.com"


def _finished(result: AttemptResult, outcome: Outcome) -> Finished:
    claimed = Claimed(uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), 2, False, "http://127.0.0.1:9/h?token=t0ps3cret", b"", "{}", uuid.uuid4())
    return Finished(claimed, result, outcome)


def test_the_worker_logs_why_an_attempt_failed_and_when_it_comes_again(caplog):
    caplog.set_level(logging.INFO, logger="dps.webhooks.worker")
    retry = Outcome(DeliveryStatus.FAILED, 90.04, EndpointEffect.NONE)
    log_attempt(_finished(AttemptResult(None, None, "Connection refused.", 3), retry))
    log_attempt(_finished(AttemptResult(503, "busy", None, 12), retry))
    log_attempt(_finished(AttemptResult(204, "", None, 5), Outcome(DeliveryStatus.SUCCESS, None, EndpointEffect.RESET_FAILURES)))
    refused, answered, delivered = caplog.records
    assert (refused.levelname, refused.message, refused.error, refused.retryInSeconds) == (
        "WARNING", "delivery attempt failed", "Connection refused.", 90.0
    )
    assert refused.receiver == "http://127.0.0.1:9" and refused.attempt == 2  # never the path or query
    assert (answered.responseStatus, answered.error) == (503, "The receiver answered 503; only 2xx counts as delivered.")
    assert (delivered.levelname, delivered.message, delivered.responseStatus) == ("INFO", "delivery attempted", 204)
    assert not hasattr(delivered, "error")


def test_settings_from_the_environment_alone_default_to_production():
    env = {
        "DATABASE_URL": "postgresql://u@h/db",
        "CURSOR_SECRET": "c" * 40,
        "WEBHOOK_SECRET_KEY": "A" * 43 + "=",
        "API_URL": "http://api",
        "INTERNAL_API_TOKEN": "t" * 40,
        "WEBHOOK_ALLOW_INSECURE_LOOPBACK": "1",
    }
    with pytest.raises(SettingsError, match="DPS_ENVIRONMENT=development"):
        Settings.from_env(env)
