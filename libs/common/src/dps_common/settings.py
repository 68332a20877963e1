"""Settings from the environment, validated at start with messages that say what to fix.

A settings class is a pydantic-settings model (``EnvSettings``): each field names its variable
(``validation_alias``), its default and its check (the types below), once. ``Settings.from_env()``
reads them all and raises one ``SettingsError`` naming every problem ("DATABASE_URL is required;
DB_POOL_SIZE must be between 1 and 100, got 0"). An empty variable counts as unset.

The environment is read only by ``from_env`` (os.environ, or the mapping it is given): a class built
by its field names in code (``Settings(database_url=...)``, tests, benches) takes nothing from the
process's environment, and its values pass the same checks.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NoReturn, Self, TypeVar
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.sources.utils import parse_env_vars

from dps_common.crypto import decode_key

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAKE_A_KEY = "python -c 'import base64,os;print(base64.b64encode(os.urandom(32)).decode())'"
SECRET_MIN_LENGTH = 32

# pydantic's own failures, said the way an operator reads them (our checks word their own)
_MESSAGES = {
    "missing": "is required",
    "int_parsing": "must be an integer, got {input!r}",
    "int_from_float": "must be an integer, got {input!r}",
    "float_parsing": "must be a number, got {input!r}",
    "bool_parsing": "must be true or false, got {input!r}",
}


class SettingsError(ValueError):
    pass


class EnvSettings(BaseSettings):
    """The base of every settings class: frozen, variables named exactly (case-sensitive), an empty
    value as unset, lists given comma-separated (no JSON decoding), defaults taken as declared (an
    empty default may mean off where a set value must be a URL)."""

    model_config = SettingsConfigDict(
        frozen=True, case_sensitive=True, env_ignore_empty=True, enable_decoding=False, validate_default=False,
        validate_by_name=True, validate_by_alias=True, extra="ignore",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)  # the environment comes through from_env only (see the module's docstring)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        """The settings from ``environ`` (default: the process's), or a ``SettingsError`` naming every problem."""
        values = _Environ(cls, os.environ if environ is None else environ)()
        try:
            return cls.model_validate(values)  # as found: a problem names the variable that was set
        except ValidationError as error:
            raise SettingsError("invalid configuration: " + "; ".join(_problem(e) for e in error.errors())) from None


class _Environ(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping. A value is keyed by the name it was
    found under (DB_POOL_SIZE for a field that also reads DATABASE_POOL_SIZE), so that a problem names
    the variable that was set; a field that is itself ``EnvSettings`` reads its variables from the same
    mapping (the rate limits of a service's settings)."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]):
        self._environ = environ
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._environ, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)

    def _get_resolved_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        # pydantic-settings keys a value by the field's first name; keep the one it was found under
        return self.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        values = super().__call__()
        for name, field in self.settings_cls.model_fields.items():
            if isinstance(field.annotation, type) and issubclass(field.annotation, EnvSettings):
                values[name] = _Environ(field.annotation, self._environ)()
        return values


def _problem(error: ErrorDetails) -> str:
    """One problem: the variable's name (the last name in the error's location), then what is wrong."""
    name = next((part for part in reversed(error["loc"]) if isinstance(part, str)), "")
    template = _MESSAGES.get(error["type"])
    text = template.format(input=error["input"]) if template else error["msg"]
    return f"{name} {text}" if name else text


def refuse(message: str, **context: Any) -> NoReturn:
    """Fail a check with ``message`` (what must hold, without the variable's name: ``_problem`` adds it)."""
    raise PydanticCustomError("settings", message, context)


T = TypeVar("T", int, float)


def between(minimum: float, maximum: float) -> AfterValidator:
    """A number within [minimum, maximum]."""

    def check(value: T) -> T:
        if not minimum <= value <= maximum:
            refuse("must be between {minimum} and {maximum}, got {value}", minimum=minimum, maximum=maximum, value=value)
        return value

    return AfterValidator(check)


def comma_separated(value: Any) -> Any:
    """``a, b,c`` as ``("a", "b", "c")``; a value given in code as it is."""
    return tuple(part.strip() for part in value.split(",") if part.strip()) if isinstance(value, str) else value


def _flag(value: Any) -> Any:
    """true or false, 1 or 0 (any case): pydantic's yes/no, on/off are refused, as they always were."""
    if not isinstance(value, str):
        return value
    text = value.strip().lower()
    if text not in ("true", "false", "1", "0"):
        refuse("must be true or false, got {value}", value=repr(text))
    return text in ("true", "1")


def _postgres_url(value: str) -> str:
    if not value.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        refuse("must be a postgresql:// URL")
    return value


def _http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        refuse("must be an http(s):// URL, got {value}", value=repr(value))
    return value


def _http_urls(values: tuple[str, ...]) -> tuple[str, ...]:
    for url in values:
        if not url.startswith(("http://", "https://")):
            refuse("must list http:// or https:// URLs, got {url}", url=repr(url))
    return values


def _long_enough(value: Any) -> Any:
    if value and len(value) < SECRET_MIN_LENGTH:
        refuse("must be at least {length} characters", length=SECRET_MIN_LENGTH)
    return value


def _key(value: Any) -> Any:
    """A base64 text from the environment, decoded; 32 bytes given in code, as they are."""
    if isinstance(value, bytes) and len(value) == 32:
        return value
    try:
        return decode_key(value.decode() if isinstance(value, bytes) else str(value))
    except ValueError as exc:
        refuse("{problem} (make one: {how})", problem=str(exc), how=MAKE_A_KEY)


def _networks(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return tuple(ipaddress.ip_network(part) for part in comma_separated(value))
    except ValueError as exc:
        refuse("must list addresses or networks (10.0.0.0/8,::1): {problem}", problem=str(exc))


def one_of(*choices: str) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in choices:
            refuse("must be {choices}, got {value}", choices=" or ".join(choices), value=repr(value))
        return value

    return check


# the types of the variables; a field says ``name: PostgresUrl = Field(validation_alias="DATABASE_URL")``
PostgresUrl = Annotated[str, AfterValidator(_postgres_url)]
HttpUrl = Annotated[str, AfterValidator(_http_url), AfterValidator(lambda url: url.rstrip("/"))]  # no trailing /
HttpUrlAsGiven = Annotated[str, AfterValidator(_http_url)]  # its trailing / kept
HttpUrls = Annotated[tuple[str, ...], BeforeValidator(comma_separated), AfterValidator(_http_urls)]
# secrets: at least 32 characters (a default of b"" or "": optional), never in the settings' repr
Secret = Annotated[bytes, Field(repr=False), AfterValidator(_long_enough)]
SecretText = Annotated[str, Field(repr=False), AfterValidator(_long_enough)]
Key = Annotated[bytes, Field(repr=False), BeforeValidator(_key)]  # 32 bytes, in base64
Flag = Annotated[bool, BeforeValidator(_flag)]
Networks = Annotated[tuple[Network, ...], BeforeValidator(_networks)]


class DatabaseSettings(EnvSettings):
    """DATABASE_URL alone: what ``<service> migrate`` and the admin commands need."""

    database_url: PostgresUrl = Field(validation_alias="DATABASE_URL")
