"""The api's configuration, read from the environment and validated at start."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from dps_common.bootstrap_settings import ExternalApiSettings
from dps_common.settings import Env

API_PREFIX = "/external/v1"  # dps_common.http.app's: the relative base every document used


@dataclass(frozen=True)
class Settings(ExternalApiSettings):
    """The api's own fields; the shared ones (DATABASE_URL, CURSOR_SECRET, AMQP_URL, REDIS_URL...) are
    ``ExternalApiSettings``'."""

    api_key_pepper: bytes
    internal_api_token: str = ""  # other services' bearer token for key introspection; unset: not served
    # the settings console's bearer token for /internal/v1/console/*; unset: not served (the console is off)
    console_api_token: str = ""
    # the other services' own OpenAPI documents (``/internal/v1/openapi.json``), merged into the
    # external one; unset: the api's own operations only
    openapi_part_urls: tuple[str, ...] = ()
    # PUBLIC_API_URL: the document's servers entry, where clients reach the whole API (the ingress, make
    # run's proxy), e.g. https://api.example.com/external/v1; unset: the relative /external/v1
    public_api_url: str = API_PREFIX

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> "Settings":
        env = Env(environ)
        settings = cls(
            **cls.shared_fields(env),
            api_key_pepper=env.secret("API_KEY_PEPPER"),
            internal_api_token=env.optional_secret("INTERNAL_API_TOKEN"),
            console_api_token=env.optional_secret("CONSOLE_API_TOKEN"),
            openapi_part_urls=env.urls("OPENAPI_PART_URLS"),
            public_api_url=env.optional("PUBLIC_API_URL").rstrip("/") or API_PREFIX,
        )
        if not _is_public_api_url(settings.public_api_url):
            env.problems.append(f"PUBLIC_API_URL must be an http(s) URL ending in {API_PREFIX}, "
                                f"e.g. https://api.example.com{API_PREFIX}")
        env.check()
        return settings


def _is_public_api_url(url: str) -> bool:
    if url == API_PREFIX:
        return True
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and parts.path == API_PREFIX and not parts.query
