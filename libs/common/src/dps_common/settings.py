"""Settings from the environment, validated at start with messages that say what to fix."""

from __future__ import annotations

import builtins
import ipaddress
import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from dps_common.crypto import decode_key

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAKE_A_KEY = "python -c 'import base64,os;print(base64.b64encode(os.urandom(32)).decode())'"


class SettingsError(ValueError):
    pass


class Env:
    """Typed reads of environment variables; every problem is collected and reported together.

    The methods are named after the types they read (``env.int(...)``), which hides the builtins in
    the annotations that follow them: those say ``builtins.int``."""

    def __init__(self, environ: Mapping[str, str] | None = None):
        self._environ = os.environ if environ is None else environ
        self.problems: list[str] = []

    def str(self, name: str, default: str | None = None) -> str:
        value = self._environ.get(name, default)
        if value is None or value == "":
            self.problems.append(f"{name} is required")
            return ""
        return value

    def optional(self, name: builtins.str) -> builtins.str:
        """A value whose absence is meaningful (a feature off, a default computed elsewhere)."""
        return self._environ.get(name, "")

    def int(
        self, name: builtins.str, default: builtins.int, *,
        minimum: builtins.int | None = None, maximum: builtins.int | None = None,
    ) -> builtins.int:
        raw = self._environ.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            self.problems.append(f"{name} must be an integer, got {raw!r}")
            return default
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.problems.append(f"{name} must be between {minimum} and {maximum}, got {value}")
        return value

    def float(
        self, name: builtins.str, default: builtins.float, *,
        minimum: builtins.float | None = None, maximum: builtins.float | None = None,
    ) -> builtins.float:
        raw = self._environ.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = float(raw)
        except ValueError:
            self.problems.append(f"{name} must be a number, got {raw!r}")
            return default
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.problems.append(f"{name} must be between {minimum} and {maximum}, got {value}")
        return value

    def secret(self, name: builtins.str, *, min_length: builtins.int = 32) -> bytes:
        value = self.str(name)
        if value and len(value) < min_length:
            self.problems.append(f"{name} must be at least {min_length} characters")
        return value.encode()

    def optional_secret(self, name: builtins.str, *, min_length: builtins.int = 32) -> builtins.str:
        """A secret that may be absent (its feature is then off); when set, as long as ``secret``."""
        value = self._environ.get(name, "")
        if value and len(value) < min_length:
            self.problems.append(f"{name} must be at least {min_length} characters")
        return value

    def urls(self, name: builtins.str) -> tuple[builtins.str, ...]:
        """A comma-separated list of http(s) URLs; absent: none."""
        urls = tuple(url.strip() for url in self._environ.get(name, "").split(",") if url.strip())
        for url in urls:
            if not url.startswith(("http://", "https://")):
                self.problems.append(f"{name} must list http:// or https:// URLs, got {url!r}")
        return urls

    def http_url(
        self, name: builtins.str, default: builtins.str | None = None, *, keep_trailing_slash: bool = False
    ) -> builtins.str:
        """A required http(s) URL (``default`` when unset), without its trailing slash unless kept."""
        value = self.str(name, default)
        if value:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                self.problems.append(f"{name} must be an http(s):// URL, got {value!r}")
        return value if keep_trailing_slash else value.rstrip("/")

    def key(self, name: builtins.str) -> bytes:
        """A required 32-byte key, in base64."""
        raw = self.str(name)
        if not raw:
            return b""
        try:
            return decode_key(raw)
        except ValueError as exc:
            self.problems.append(f"{name} {exc} (make one: {MAKE_A_KEY})")
            return b""

    def bool(self, name: builtins.str, default: builtins.bool = False) -> builtins.bool:
        """true or false (1 or 0); unset: ``default``."""
        raw = self.optional(name).strip().lower()
        if not raw:
            return default
        if raw not in ("true", "false", "1", "0"):
            self.problems.append(f"{name} must be true or false, got {raw!r}")
            return default
        return raw in ("true", "1")

    def networks(self, name: builtins.str) -> tuple[Network, ...]:
        """Comma-separated addresses or networks (``10.0.0.0/8,::1``); unset: none."""
        try:
            return tuple(ipaddress.ip_network(part.strip()) for part in self.optional(name).split(",") if part.strip())
        except ValueError as exc:
            self.problems.append(f"{name}: {exc}")
            return ()

    def postgres_url(self, name: builtins.str = "DATABASE_URL") -> builtins.str:
        value = self.str(name)
        if value and not value.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
            self.problems.append(f"{name} must be a postgresql:// URL")
        return value

    def check(self) -> None:
        if self.problems:
            raise SettingsError("invalid configuration: " + "; ".join(self.problems))
