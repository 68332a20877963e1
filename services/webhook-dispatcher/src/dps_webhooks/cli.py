"""``dealpricing-webhooks``: the dispatcher's processes and chores.

- ``migrate``: apply the dispatcher's migrations to DATABASE_URL.
- ``worker``: consume the api's events and deliver them (scale this by running more of it); the
  process is put together by ``composition.build_worker``.
"""

from __future__ import annotations

import argparse

from dps_common.bootstrap_cli import run_command

from dps_webhooks import SERVICE
from dps_webhooks.composition import build_worker
from dps_webhooks.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dealpricing-webhooks", description=(__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate", help="apply the dispatcher's database migrations")
    worker = commands.add_parser("worker", help="consume events and deliver webhooks until stopped")
    worker.add_argument(
        "--no-consume", action="store_true", help="deliver only; leave the event queue to other workers"
    )
    args = parser.parse_args(argv)

    def work(settings: Settings) -> int:
        build_worker(settings, consume=not args.no_consume).run()
        return 0

    return run_command(args.command, "dps_webhooks", Settings.from_env, work, service=SERVICE, process="delivery-worker")
