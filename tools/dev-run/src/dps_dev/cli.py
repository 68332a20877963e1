"""``dealpricing-dev``: ``make run`` (no arguments); ``dealpricing-dev receiver``, a webhook receiver
on this machine that prints each delivery it verified; ``dealpricing-dev mailbox``, the development
SMTP sink and its page (``make run`` starts it)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence

from sqlalchemy.exc import OperationalError

from dps_common.settings import SettingsError

from dps_api.cli.seed import SeedError
from dps_dev import mailbox, receiver
from dps_dev.config import ConfigError, RunConfig
from dps_dev.postgres import PostgresFailed
from dps_dev.redis_server import RedisFailed
from dps_dev.runner import run
from dps_dev.signals import StopRequested, StopSignals
from dps_dev.supervisor import StartFailed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="dealpricing-dev",
        description="make run: the whole Deal Pricing Service on this machine, until Ctrl-C or SIGTERM.",
    )
    commands = parser.add_subparsers(dest="command")
    receiver.add_parser(commands)
    mailbox.add_parser(commands)
    args = parser.parse_args(argv)
    if args.command == "receiver":
        return receiver.main(args)
    if args.command == "mailbox":
        return mailbox.main(args)
    signals = StopSignals()
    signals.install()  # before anything starts: a stop at any moment unwinds through the clean-up
    try:
        return run(RunConfig.from_env(), signals)
    except StopRequested:
        return 0
    except (ConfigError, SettingsError, SeedError, PostgresFailed, RedisFailed, StartFailed) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except OperationalError as error:
        print(f"error: cannot reach the database: {error.orig or error}", file=sys.stderr)
        return 1
    except subprocess.CalledProcessError as error:
        print(f"error: {' '.join(map(str, error.cmd))} failed with {error.returncode}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
