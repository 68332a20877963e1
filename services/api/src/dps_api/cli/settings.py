"""What the admin command line needs from the environment, checked up front with clear messages.

DATABASE_URL and API_KEY_PEPPER come from the environment. When DATABASE_URL is not set, the command
line looks for a running ``make run`` instead: its ``.run/admin.env`` (in DPS_RUN_DIR, else in
``.run`` of this folder or the nearest parent that has one), which ``make run`` writes at start with
the api's database and pepper and removes when it stops, and says on stderr that it uses it."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dps_common.settings import Env, SettingsError

RUN_FILE = "admin.env"
HOW = (
    "set DATABASE_URL and API_KEY_PEPPER (the api's), or start `make run` and run this from the repository's "
    "folder (it then reads .run/admin.env)"
)


@dataclass(frozen=True)
class AdminSettings:
    database_url: str
    api_key_pepper: bytes  # empty when the command needs no keys (``migrate``)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, needs_pepper: bool = True) -> "AdminSettings":
        """Raises ``SettingsError`` naming every missing or malformed variable."""
        values = dict(os.environ if environ is None else environ)
        found = None if values.get("DATABASE_URL") else make_run_file(values)
        if found is not None:
            print(f"DATABASE_URL is not set: using make run's database and pepper from {found}", file=sys.stderr)
            values = {**_read(found), **{k: v for k, v in values.items() if v}}
        env = Env(values)
        database_url = env.postgres_url("DATABASE_URL")
        # the pepper must be the api's own: keys hashed with another pepper never authenticate
        pepper = env.secret("API_KEY_PEPPER") if needs_pepper else b""
        try:
            env.check()
        except SettingsError as error:
            raise SettingsError(f"{error}. {HOW[0].upper()}{HOW[1:]}") if not values.get("DATABASE_URL") else error
        return cls(database_url, pepper)


def make_run_file(environ: Mapping[str, str], cwd: Path | None = None) -> Path | None:
    """The ``admin.env`` of a running ``make run``, if one is found."""
    if environ.get("DPS_RUN_DIR"):
        candidates = [Path(environ["DPS_RUN_DIR"])]
    else:
        here = (cwd or Path.cwd()).resolve()
        candidates = [folder / ".run" for folder in (here, *here.parents)]
    for run_dir in candidates:
        if (run_dir / RUN_FILE).is_file():
            return run_dir / RUN_FILE
    return None


def _read(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        name, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#"):
            values[name.strip()] = value.strip()
    return values
