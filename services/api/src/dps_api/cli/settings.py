"""What the admin command line needs from the environment, checked up front with clear messages."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dps_common.settings import Env


@dataclass(frozen=True)
class AdminSettings:
    database_url: str
    api_key_pepper: bytes  # empty when the command needs no keys (``migrate``)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, needs_pepper: bool = True) -> "AdminSettings":
        """Raises ``SettingsError`` naming every missing or malformed variable."""
        env = Env(environ)
        database_url = env.postgres_url("DATABASE_URL")
        # the pepper must be the api's own: keys hashed with another pepper never authenticate
        pepper = env.secret("API_KEY_PEPPER") if needs_pepper else b""
        env.check()
        return cls(database_url, pepper)
