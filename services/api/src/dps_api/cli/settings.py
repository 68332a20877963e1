"""What the admin command line needs from the environment, checked up front with clear messages.

DATABASE_URL and API_KEY_PEPPER come from the environment. When DATABASE_URL is not set, the command
line looks for a running ``make run`` instead: its ``.run/admin.env`` (in DPS_RUN_DIR, else in
``.run`` of this folder or the nearest parent that has one), which ``make run`` writes at start with
the api's database and pepper and removes when it stops, and says on stderr that it uses it."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from pydantic import Field

from dps_common.settings import DatabaseSettings, Secret, SettingsError

RUN_FILE = "admin.env"
HOW = (
    "set DATABASE_URL and API_KEY_PEPPER (the api's), or start `make run` and run this from the repository's "
    "folder (it then reads .run/admin.env)"
)


class AdminSettings(DatabaseSettings):
    # the pepper must be the api's own: keys hashed with another pepper never authenticate; empty when
    # the command needs no keys (``migrate``)
    api_key_pepper: Secret = Field(b"", validation_alias="API_KEY_PEPPER")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, needs_pepper: bool = True) -> AdminSettings:
        """Raises ``SettingsError`` naming every missing or malformed variable."""
        values = dict(os.environ if environ is None else environ)
        found = None if values.get("DATABASE_URL") else make_run_file(values)
        if found is not None:
            print(f"DATABASE_URL is not set: using make run's database and pepper from {found}", file=sys.stderr)
            values = {**_read(found), **{k: v for k, v in values.items() if v}}
        try:
            read = (_WithPepper if needs_pepper else DatabaseSettings).from_env(values)
            return cls(**read.model_dump())
        except SettingsError as error:
            raise SettingsError(f"{error}. {HOW[0].upper()}{HOW[1:]}") if not values.get("DATABASE_URL") else error


class _WithPepper(DatabaseSettings):
    api_key_pepper: Secret = Field(validation_alias="API_KEY_PEPPER")


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
