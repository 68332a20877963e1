"""``dealpricing-console``: the console's processes and chores.

- ``migrate``: apply the console's migrations to DATABASE_URL.
- ``purge``: delete sign-in links, sessions, form results and rate windows over for more than a day.
- ``worker``: send the sign-in mails the pages queue, with retries (run one or more, always).
- ``sign-in-link EMAIL``: print a fresh one-time sign-in link for a known person, without mail
  (operators, ``make run``'s banner); the console's whole configuration is read.
"""

from __future__ import annotations

import argparse
import sys

from dps_common.bootstrap_cli import run_command

from dps_console import SERVICE
from dps_console.composition import build_chores, build_mail_worker
from dps_console.settings import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dealpricing-console", description=(__doc__ or "").splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("migrate", help="apply the console's database migrations")
    link = commands.add_parser("sign-in-link", help="print a one-time sign-in link for a known person")
    link.add_argument("email")
    commands.add_parser("purge", help="delete links, sessions and rate windows over for a day")
    commands.add_parser("worker", help="send the queued sign-in mails until stopped")
    args = parser.parse_args(argv)
    return run_command(args.command, "dps_console", Settings.from_env, lambda settings: _chore(args, settings),
                       service=SERVICE, process="mail-worker" if args.command == "worker" else "cli")


def _chore(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "worker":
        build_mail_worker(settings).serve()
        return 0
    chores = build_chores(settings)
    try:
        if args.command == "purge":
            purged = chores.purge()
            print(f"purged {purged.links} links, {purged.sessions} sessions, {purged.forms} form results, "
                  f"{purged.counters} rate windows")
            return 0
        print(chores.sign_in_link(args.email))
        return 0
    except ValueError as exc:  # not an email address
        print(exc, file=sys.stderr)
        return 2
    except (LookupError, ConnectionError) as exc:  # nobody of that address; the api did not answer
        print(exc, file=sys.stderr)
        return 1
    finally:
        chores.close()


if __name__ == "__main__":
    sys.exit(main())
