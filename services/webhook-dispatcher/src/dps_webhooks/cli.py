"""``dealpricing-webhooks``: the dispatcher's processes and chores.

- ``migrate``: apply the dispatcher's migrations to DATABASE_URL.
- ``worker``: consume the api's events and deliver them (scale this by running more of it).
"""

from __future__ import annotations

import argparse
import sys

from dps_common import logs
from dps_common.settings import Env, SettingsError

from dps_webhooks.db.migrate import upgrade
from dps_webhooks.delivery.worker import run_worker
from dps_webhooks.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dealpricing-webhooks", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate", help="apply the dispatcher's database migrations")
    worker = commands.add_parser("worker", help="consume events and deliver webhooks until stopped")
    worker.add_argument(
        "--no-consume", action="store_true", help="deliver only; leave the event queue to other workers"
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "migrate":
            env = Env()
            url = env.postgres_url("DATABASE_URL")
            env.check()
            upgrade(url)
            return 0
        settings = Settings.from_env()
    except SettingsError as exc:
        print(exc, file=sys.stderr)
        return 2
    logs.configure(settings.log_level)
    run_worker(settings, consume=not args.no_consume)
    return 0
