"""Settings are validated at start, with every problem named at once."""

import pytest

from dps_common.settings import Env, SettingsError


def test_every_problem_is_reported_together():
    env = Env({"PORT": "eighty", "SECRET": "short", "DATABASE_URL": "mysql://x"})
    env.int("PORT", 8080)
    env.secret("SECRET")
    env.postgres_url()
    env.str("MISSING")
    with pytest.raises(SettingsError) as err:
        env.check()
    message = str(err.value)
    for fragment in ("PORT must be an integer", "SECRET must be at least 32", "postgresql://", "MISSING is required"):
        assert fragment in message


def test_valid_values_pass():
    env = Env({"PORT": "8081", "DATABASE_URL": "postgresql://u@h/db"})
    assert env.int("PORT", 8080, minimum=1, maximum=65535) == 8081
    assert env.postgres_url() == "postgresql://u@h/db"
    env.check()
