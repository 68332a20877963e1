"""``dealpricing-billing``: the connector's processes and chores.

- ``migrate``: apply the connector's migrations to DATABASE_URL.
- ``worker``: run billing pushes (scale this by running more of it).
"""

from __future__ import annotations

import argparse
import sys

from dps_common.bootstrap_cli import run_command

from dps_billing import SERVICE
from dps_billing.composition import build_push_worker
from dps_billing.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dealpricing-billing", description=(__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate", help="apply the connector's database migrations")
    commands.add_parser("worker", help="run billing pushes until stopped")
    args = parser.parse_args(argv)
    return run_command(args.command, "dps_billing", Settings.from_env, _work, service=SERVICE, process="push-worker")


def _work(settings: Settings) -> int:
    build_push_worker(settings).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
