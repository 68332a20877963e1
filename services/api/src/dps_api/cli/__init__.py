"""``dealpricing-admin``: the operator's command line for organizations, users and API keys.

Keys are issued, rotated, revoked and listed here (the application's settings screen is not part of
this service). Expected failures print one line on stderr and exit 2; there is no traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

import psycopg.errors
from sqlalchemy.exc import DBAPIError, OperationalError

from dps_common.errors import ServiceError
from dps_common.settings import SettingsError

from dps_api.cli.keys import key_row_id
from dps_api.cli.parser import build_parser
from dps_api.cli.render import Output
from dps_api.cli.settings import AdminSettings
from dps_api.composition import build_admin, migrate_database

EXIT_INPUT = 2  # bad input, unknown organization / user / key, missing configuration
EXIT_UNREACHABLE = 1


def main(
    argv: Sequence[str] | None = None, *, environ: Mapping[str, str] | None = None,
    stdout: TextIO | None = None, stderr: TextIO | None = None,
) -> int:
    """The command; ``environ``, ``stdout`` and ``stderr`` are the process's unless given (a caller
    in the same process, like the black-box suites' provisioning, gives its own)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # argparse already printed usage and the problem
        return stop.code if isinstance(stop.code, int) else EXIT_INPUT
    err = stderr or sys.stderr
    out = Output(args.json, stdout, err)
    try:
        if args.handler is None:
            return _migrate(out, environ)
        admin = build_admin(AdminSettings.from_env(environ))
        try:
            if getattr(args, "key", None) is not None:  # keys rotate|revoke: an id, or a prefix to look up
                args.key = key_row_id(admin, args.key)
            args.handler(args, admin, out)
        finally:
            admin.close()
    except (ServiceError, SettingsError) as error:
        print(f"error: {error}", file=err)
        return EXIT_INPUT
    except OperationalError as error:
        print(f"error: cannot reach the database: {error.orig or error}".strip(), file=err)
        return EXIT_UNREACHABLE
    except DBAPIError as error:
        if isinstance(error.orig, psycopg.errors.UndefinedTable):
            print("error: the database is not migrated; run `dealpricing-admin migrate` first", file=err)
            return EXIT_INPUT
        raise
    return 0


def _migrate(out: Output, environ: Mapping[str, str] | None) -> int:
    migrate_database(AdminSettings.from_env(environ, needs_pepper=False).database_url)
    if out.as_json:
        out.record("Migrated", {"revision": "head"})
    else:
        out.message("Database migrated to head.")
    return 0

