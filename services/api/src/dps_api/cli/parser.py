"""The admin command line's grammar: ``dealpricing-admin <group> <action> [options]``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from uuid import UUID

from dps_common.auth.scopes import Role
from dps_common.errors import ValidationFailed

from dps_api.cli import commands
from dps_api.cli.keys import KeyPrefix
from dps_api.cli.render import Output
from dps_api.composition import Admin, parse_role

Handler = Callable[[argparse.Namespace, Admin, Output], None]

ROLES_HELP = "admin, user or 'view only' (view_only and view-only are accepted too)"


def _uuid(raw: str) -> UUID:
    try:
        return UUID(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an id (UUID): {raw!r}") from None


def _role(raw: str) -> Role:
    """Checked here, before anything connects to the database."""
    try:
        return parse_role(raw)
    except ValidationFailed as error:
        raise argparse.ArgumentTypeError(f"{error} (got {raw!r})") from None


def _key(raw: str) -> UUID | KeyPrefix:
    prefix = KeyPrefix.parse(raw)
    if prefix is not None:
        return prefix
    try:
        return UUID(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a key id (UUID) or a key prefix (dps_..., as keys list prints it): {raw!r}"
        ) from None


def _text(raw: str) -> str:
    if not raw.strip() or len(raw) > 200:
        raise argparse.ArgumentTypeError("must be 1 to 200 characters")
    return raw.strip()


def _email(raw: str) -> str:
    local, at, domain = raw.strip().partition("@")
    if not (local and at and "." in domain) or len(raw) > 320:
        raise argparse.ArgumentTypeError(f"not an email address: {raw!r}")
    return raw.strip().lower()


def build_parser() -> argparse.ArgumentParser:
    # --json is accepted before or after the subcommand; SUPPRESS keeps a leaf from resetting it
    leaf_options = argparse.ArgumentParser(add_help=False)
    leaf_options.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")

    parser = argparse.ArgumentParser(
        prog="dealpricing-admin",
        description="Administer the Deal Pricing Service: organizations, users and API keys.",
        epilog="Reads DATABASE_URL and API_KEY_PEPPER (the api's) from the environment. Without DATABASE_URL, "
        "while `make run` runs, it uses make run's database and pepper from its .run/admin.env (in DPS_RUN_DIR, "
        "else in .run of this folder or the nearest parent folder that has one: run it from the repository) "
        "and says so on stderr. Exit codes: 0 done, 2 bad input or unknown organization/user/key, "
        "1 database unreachable.",
    )
    parser.add_argument("--json", action="store_true", default=False, help="print JSON (for scripts)")
    groups = parser.add_subparsers(dest="group", required=True, metavar="{orgs,users,keys,migrate}")

    def action(
        group: argparse._SubParsersAction[argparse.ArgumentParser], name: str, handler: Handler, help_text: str
    ) -> argparse.ArgumentParser:
        sub = group.add_parser(name, help=help_text, description=help_text, parents=[leaf_options])
        sub.set_defaults(handler=handler)
        return sub

    migrate = groups.add_parser(
        "migrate", help="apply the database migrations (alembic upgrade head)", parents=[leaf_options]
    )
    migrate.set_defaults(handler=None)

    orgs = groups.add_parser("orgs", help="organizations").add_subparsers(dest="action", required=True)
    action(orgs, "create", commands.orgs_create, "create an organization").add_argument("--name", required=True, type=_text)
    action(orgs, "list", commands.orgs_list, "list organizations")

    users = groups.add_parser("users", help="users of an organization").add_subparsers(dest="action", required=True)
    create = action(users, "create", commands.users_create, "create a user")
    create.add_argument("--org", required=True, type=_uuid, help="organization id")
    create.add_argument("--email", required=True, type=_email)
    create.add_argument("--name", required=True, type=_text)
    create.add_argument("--role", required=True, type=_role, help=f"the user's role in the app: {ROLES_HELP}")
    action(users, "list", commands.users_list, "list an organization's users").add_argument(
        "--org", required=True, type=_uuid, help="organization id"
    )

    keys = groups.add_parser("keys", help="API keys").add_subparsers(dest="action", required=True)
    issue = action(keys, "create", commands.keys_create, "issue an API key (the key is printed once)")
    issue.add_argument("--org", required=True, type=_uuid, help="organization id")
    issue.add_argument("--user", required=True, type=_uuid, help="id of the user the key acts as")
    issue.add_argument("--role", required=True, type=_role, help=f"the key's role: {ROLES_HELP}")
    issue.add_argument("--name", required=True, type=_text, help="label, one named key per integration")
    for name, handler, help_text in (
        ("rotate", commands.keys_rotate, "replace a key's secret (the new key is printed once)"),
        ("revoke", commands.keys_revoke, "disable a key permanently"),
    ):
        action(keys, name, handler, help_text).add_argument(
            "--key", required=True, type=_key, help="the key's id, or its prefix dps_... (as keys create/list print them)"
        )
    action(keys, "list", commands.keys_list, "list an organization's keys (never secrets)").add_argument(
        "--org", required=True, type=_uuid, help="organization id"
    )
    return parser
