"""The settings the services share (``dps_common.bootstrap_settings``): each variable is read once,
with one name, one default and one check, and every problem is still named in one message; and the
variable types that more than one service uses (URLs, keys, flags, networks)."""

import base64
import ipaddress

import pytest
from pydantic import Field, ValidationError

from dps_common.bootstrap_settings import (
    ApiClientSettings,
    ExternalApiSettings,
    IntrospectingServiceSettings,
    ServiceSettings,
)
from dps_common.crypto import new_key
from dps_common.messaging import DEFAULT_EVENTS_EXCHANGE
from dps_common.ratelimit.settings import MEMORY_STORE
from dps_common.settings import MAKE_A_KEY, EnvSettings, Flag, HttpUrl, HttpUrlAsGiven, Key, Networks, SettingsError

REQUIRED = {
    "DATABASE_URL": "postgresql://u@h/db",
    "API_URL": "https://api.example/",
    "CURSOR_SECRET": "c" * 32,
    "INTERNAL_API_TOKEN": "t" * 32,
}


def read(group, environ):
    return group.from_env(environ)


def problems(settings_class, environ) -> list[str]:
    with pytest.raises(SettingsError) as raised:
        settings_class.from_env(environ)
    return str(raised.value).removeprefix("invalid configuration: ").split("; ")


def test_the_defaults():
    settings = read(IntrospectingServiceSettings, REQUIRED)
    assert (settings.database_url, settings.db_pool_size, settings.log_level) == ("postgresql://u@h/db", 5, "INFO")
    assert settings.db_max_overflow == 5
    assert (settings.environment, settings.development) == ("production", False)
    assert (settings.api_url, settings.api_ca_file) == ("https://api.example", "")  # no trailing slash
    assert (settings.cursor_secret, settings.internal_api_token) == (b"c" * 32, "t" * 32)
    assert (settings.key_cache_ttl_seconds, settings.amqp_url) == (60.0, "")  # no broker: key TTL only
    assert settings.events_exchange == DEFAULT_EVENTS_EXCHANGE
    assert settings.rate_limits.storage_url == MEMORY_STORE


def test_each_group_reads_only_its_own_variables():
    service = {"DATABASE_URL": REQUIRED["DATABASE_URL"]}
    assert set(ServiceSettings.model_fields) == {
        "database_url", "db_pool_size", "db_max_overflow", "log_level", "environment"}
    assert read(ApiClientSettings, {**service, "API_URL": "http://api"}).api_url == "http://api"
    assert read(ExternalApiSettings, {**service, "CURSOR_SECRET": "c" * 32}).cursor_secret == b"c" * 32
    with pytest.raises(SettingsError, match="API_URL is required"):
        read(IntrospectingServiceSettings, {k: v for k, v in REQUIRED.items() if k != "API_URL"})


def test_every_value_is_read():
    settings = read(IntrospectingServiceSettings, {
        **REQUIRED, "DB_POOL_SIZE": "7", "LOG_LEVEL": "DEBUG", "API_CA_FILE": "/ca.pem", "KEY_CACHE_TTL_SECONDS": "0",
        "AMQP_URL": "amqp://broker", "EVENTS_EXCHANGE": "events", "REDIS_URL": "redis://r:6379/0",
        "DPS_ENVIRONMENT": " Development",
    })
    assert settings.development
    assert (settings.db_pool_size, settings.log_level, settings.api_ca_file) == (7, "DEBUG", "/ca.pem")
    assert (settings.key_cache_ttl_seconds, settings.amqp_url, settings.events_exchange) == (0.0, "amqp://broker", "events")
    assert settings.rate_limits.storage_url == "redis://r:6379/0"
    with pytest.raises(ValidationError, match="frozen"):
        settings.log_level = "INFO"


def test_the_pool_sizes_are_read_under_their_names_and_the_older_one():
    settings = read(ServiceSettings, {**REQUIRED, "DATABASE_POOL_SIZE": "2", "DATABASE_MAX_OVERFLOW": "0"})
    assert (settings.db_pool_size, settings.db_max_overflow) == (2, 0)
    assert read(ServiceSettings, {**REQUIRED, "DB_POOL_SIZE": "3"}).db_pool_size == 3  # deployments set this one
    assert read(ServiceSettings, {**REQUIRED, "DB_POOL_SIZE": "3", "DATABASE_POOL_SIZE": "4"}).db_pool_size == 4
    with pytest.raises(SettingsError, match="DATABASE_MAX_OVERFLOW must be between 0 and 100"):
        read(ServiceSettings, {**REQUIRED, "DATABASE_MAX_OVERFLOW": "-1"})


def test_every_problem_is_named_in_one_message():
    with pytest.raises(SettingsError) as raised:
        read(IntrospectingServiceSettings, {
            "DATABASE_URL": "mysql://u@h/db", "DB_POOL_SIZE": "0", "API_URL": "ftp://api", "CURSOR_SECRET": "short",
            "KEY_CACHE_TTL_SECONDS": "-1", "REDIS_URL": "memcached://m", "DPS_ENVIRONMENT": "staging",
        })
    message = str(raised.value)
    for part in (
        "DATABASE_URL must be a postgresql:// URL",
        "DB_POOL_SIZE must be between 1 and 100",
        "API_URL must be an http(s):// URL, got 'ftp://api'",
        "CURSOR_SECRET must be at least 32 characters",
        "DPS_ENVIRONMENT must be production or development, got 'staging'",
        "KEY_CACHE_TTL_SECONDS must be between 0",
        "INTERNAL_API_TOKEN is required",
        "REDIS_URL must be a redis://",
    ):
        assert part in message


class Consuming(ExternalApiSettings):
    amqp_url: str = Field("amqp://local", validation_alias="AMQP_URL")


def test_a_service_that_consumes_events_names_its_default_broker():
    service = {"DATABASE_URL": REQUIRED["DATABASE_URL"], "CURSOR_SECRET": "c" * 32}
    assert read(Consuming, service).amqp_url == "amqp://local"
    assert read(Consuming, {**service, "AMQP_URL": "amqp://elsewhere"}).amqp_url == "amqp://elsewhere"
    assert read(ExternalApiSettings, service).amqp_url == ""


class Urls(EnvSettings):
    kept: HttpUrlAsGiven = Field("https://default.example/", validation_alias="KEPT")
    stripped: HttpUrl = Field("https://default.example", validation_alias="URL")
    other: HttpUrl = Field(validation_alias="OTHER")


@pytest.mark.parametrize(("value", "kept", "stripped"), [
    ("https://h.example/a/", "https://h.example/a/", "https://h.example/a"),
    ("http://127.0.0.1:8080", "http://127.0.0.1:8080", "http://127.0.0.1:8080"),
])
def test_an_http_url_loses_its_trailing_slash_unless_kept(value, kept, stripped):
    settings = Urls.from_env({"KEPT": value, "URL": value, "OTHER": value})
    assert (settings.kept, settings.stripped) == (kept, stripped)


@pytest.mark.parametrize("value", ["ftp://h.example", "h.example", "https://"])
def test_an_http_url_must_have_a_scheme_and_a_host(value):
    assert problems(Urls, {"URL": value, "OTHER": "https://o.example"}) == [f"URL must be an http(s):// URL, got {value!r}"]


def test_an_unset_http_url_takes_its_default_or_is_required():
    assert problems(Urls, {}) == ["OTHER is required"]
    assert Urls.from_env({"OTHER": "https://o.example"}).stripped == "https://default.example"


class Keys(EnvSettings):
    key: Key = Field(validation_alias="KEY")
    short: Key = Field(validation_alias="SHORT")
    garbled: Key = Field(validation_alias="GARBLED")
    missing: Key = Field(validation_alias="MISSING")


def test_a_key_is_32_bytes_of_base64_and_its_problem_says_how_to_make_one():
    key = new_key()
    environ = {"KEY": key, "SHORT": "c2hvcnQ=", "GARBLED": "not base64!"}
    assert problems(Keys, environ) == [
        f"SHORT must decode to 32 bytes, got 5 (make one: {MAKE_A_KEY})", f"GARBLED must be base64 (make one: {MAKE_A_KEY})",
        "MISSING is required",
    ]
    settings = Keys.from_env({**environ, "SHORT": key, "GARBLED": key, "MISSING": key})
    assert settings.key == base64.b64decode(key)
    assert Keys(key=bytes(32), short=bytes(32), garbled=bytes(32), missing=bytes(32)).key == bytes(32)  # in code: the bytes


class Flags(EnvSettings):
    flag: Flag = Field(False, validation_alias="FLAG")
    on: Flag = Field(True, validation_alias="ON")


@pytest.mark.parametrize(("raw", "default", "value"), [
    ("", False, False), ("", True, True), ("true", False, True), ("1", False, True), (" FALSE ", True, False), ("0", True, False),
])
def test_a_flag(raw, default, value):
    settings = Flags.from_env({"ON" if default else "FLAG": raw})
    assert (settings.on if default else settings.flag) is value


def test_a_flag_is_true_or_false():
    assert problems(Flags, {"FLAG": "maybe"}) == ["FLAG must be true or false, got 'maybe'"]
    assert problems(Flags, {"FLAG": "yes"}) == ["FLAG must be true or false, got 'yes'"]  # pydantic's yes is refused


class Nets(EnvSettings):
    nets: Networks = Field((), validation_alias="NETS")
    unset: Networks = Field((), validation_alias="UNSET")
    bad: Networks = Field((), validation_alias="BAD")


def test_networks():
    settings = Nets.from_env({"NETS": "127.0.0.0/8, ::1"})
    assert settings.nets == (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1"))
    assert settings.unset == ()
    (problem,) = problems(Nets, {"BAD": "10.0.0.0/33"})
    assert problem.startswith("BAD must list addresses or networks") and "10.0.0.0/33" in problem
