"""Settings are validated at start, with every problem named at once."""

from typing import Annotated

import pytest
from pydantic import Field

from dps_common.settings import EnvSettings, PostgresUrl, Secret, SettingsError, between


class Example(EnvSettings):
    port: Annotated[int, between(1, 65535)] = Field(8080, validation_alias="PORT")
    secret: Secret = Field(b"", validation_alias="SECRET")
    database_url: PostgresUrl = Field(validation_alias="DATABASE_URL")
    missing: str = Field(validation_alias="MISSING")


def test_every_problem_is_reported_together():
    with pytest.raises(SettingsError) as err:
        Example.from_env({"PORT": "eighty", "SECRET": "short", "DATABASE_URL": "mysql://x"})
    message = str(err.value)
    for fragment in ("PORT must be an integer", "SECRET must be at least 32", "postgresql://", "MISSING is required"):
        assert fragment in message


def test_valid_values_pass():
    settings = Example.from_env({"PORT": "8081", "DATABASE_URL": "postgresql://u@h/db", "MISSING": "here"})
    assert (settings.port, settings.database_url) == (8081, "postgresql://u@h/db")


def test_an_empty_variable_is_unset_and_code_reads_no_environment(monkeypatch):
    assert Example.from_env({"PORT": "", "DATABASE_URL": "postgresql://u@h/db", "MISSING": "x"}).port == 8080
    monkeypatch.setenv("PORT", "9")
    assert Example(database_url="postgresql://u@h/db", missing="x").port == 8080  # built in code: nothing read
    assert Example.from_env({"DATABASE_URL": "postgresql://u@h/db", "MISSING": "x"}).port == 8080  # the mapping only
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@h/env")
    monkeypatch.setenv("MISSING", "x")
    assert (Example.from_env().port, Example.from_env().database_url) == (9, "postgresql://u@h/env")  # os.environ


def test_secrets_stay_out_of_the_repr():
    settings = Example.from_env({"SECRET": "s" * 32, "DATABASE_URL": "postgresql://u@h/db", "MISSING": "x"})
    assert settings.secret == b"s" * 32 and "sss" not in repr(settings)
