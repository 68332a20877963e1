"""The api's configuration, read from the environment and validated at start."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field

from dps_common.bootstrap_settings import ExternalApiSettings
from dps_common.settings import HttpUrls, Secret, SecretText, refuse

API_PREFIX = "/external/v1"  # dps_common.http.app's: the relative base every document used


def _public_api_url(url: str) -> str:
    url = url.rstrip("/") or API_PREFIX
    parts = urlsplit(url)
    absolute = parts.scheme in ("http", "https") and bool(parts.netloc) and parts.path == API_PREFIX and not parts.query
    if url != API_PREFIX and not absolute:
        refuse("must be an http(s) URL ending in {prefix}, e.g. https://api.example.com{prefix}", prefix=API_PREFIX)
    return url


class Settings(ExternalApiSettings):
    """The api's own fields; the shared ones (DATABASE_URL, CURSOR_SECRET, AMQP_URL, REDIS_URL...) are
    ``ExternalApiSettings``'."""

    api_key_pepper: Secret = Field(validation_alias="API_KEY_PEPPER")
    # other services' bearer token for key introspection; unset: not served
    internal_api_token: SecretText = Field("", validation_alias="INTERNAL_API_TOKEN")
    # the settings console's bearer token for /internal/v1/console/*; unset: not served (the console is off)
    console_api_token: SecretText = Field("", validation_alias="CONSOLE_API_TOKEN")
    # the other services' own OpenAPI documents (``/internal/v1/openapi.json``), merged into the
    # external one; unset: the api's own operations only
    openapi_part_urls: HttpUrls = Field((), validation_alias="OPENAPI_PART_URLS")
    # PUBLIC_API_URL: the document's servers entry, where clients reach the whole API (the ingress, make
    # run's proxy), e.g. https://api.example.com/external/v1; unset: the relative /external/v1
    public_api_url: Annotated[str, AfterValidator(_public_api_url)] = Field(API_PREFIX, validation_alias="PUBLIC_API_URL")
