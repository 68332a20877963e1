"""The connector's settings: defaults, and every problem named in one message."""

import pytest

from dps_common.crypto import new_key
from dps_common.settings import SettingsError

from dps_billing.settings import Settings

REQUIRED = {
    "DATABASE_URL": "postgresql://u@h/db",
    "API_URL": "https://api.example",
    "INTERNAL_API_TOKEN": "t" * 32,
    "CURSOR_SECRET": "c" * 32,
    "BILLING_SECRET_KEY": "sk_test_123",
    "BILLING_CLIENT_ID": "ca_123",
    "BILLING_REDIRECT_URI": "https://billing.example/external/v1/billing-connection/callback",
    "BILLING_WEBHOOK_SECRET": "whsec_abc",
    "BILLING_TOKEN_KEY": new_key(),
    "BILLING_STATE_SECRET": "s" * 32,
}


def test_defaults_are_stripe_and_below_its_test_mode_rate():
    settings = Settings.from_env(REQUIRED)
    assert settings.billing_api_url == "https://api.stripe.com"
    assert settings.billing_marketplace_url == "https://marketplace.stripe.com"
    assert settings.billing_livemode is False
    assert settings.billing_rate_per_second == 20.0
    assert settings.state_ttl_seconds == 600.0
    assert (settings.push_lease_seconds, settings.push_poll_interval_seconds) == (15.0, 1.0)


def test_every_problem_is_named_in_one_message():
    env = {
        **REQUIRED,
        "BILLING_TOKEN_KEY": "not-base64!",
        "BILLING_WEBHOOK_SECRET": "secret",
        "BILLING_SECRET_KEY": "sk_live_abc",
        "BILLING_RATE_PER_SECOND": "500",
        "BILLING_STATE_TTL_SECONDS": "3600",
        "BILLING_LIVEMODE": "maybe",
    }
    del env["API_URL"]
    with pytest.raises(SettingsError) as raised:
        Settings.from_env(env)
    message = str(raised.value)
    for part in (
        "API_URL is required",
        "BILLING_TOKEN_KEY must be base64",
        "BILLING_WEBHOOK_SECRET must be the platform's signing secret",
        "BILLING_SECRET_KEY is a live mode key but BILLING_LIVEMODE is false",
        "BILLING_RATE_PER_SECOND must be between",
        "BILLING_STATE_TTL_SECONDS must be between 1 and 600",
        "BILLING_LIVEMODE must be true or false",
    ):
        assert part in message


def test_live_mode_with_a_live_key():
    settings = Settings.from_env({**REQUIRED, "BILLING_SECRET_KEY": "sk_live_1", "BILLING_LIVEMODE": "true"})
    assert settings.billing_livemode is True


def test_the_shared_settings_are_read_with_the_connectors_own():
    settings = Settings.from_env({**REQUIRED, "API_URL": "https://api.example/", "AMQP_URL": ""})
    assert (settings.api_url, settings.amqp_url, settings.internal_api_token) == ("https://api.example", "", "t" * 32)
    assert settings.billing_redirect_uri == REQUIRED["BILLING_REDIRECT_URI"]
