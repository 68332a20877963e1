"""One function per admin command: call one identity use case (``composition.Admin``), render its answer."""

from __future__ import annotations

from argparse import Namespace

from dps_api.cli import render
from dps_api.cli.render import Output
from dps_api.composition import Admin


def orgs_create(args: Namespace, admin: Admin, out: Output) -> None:
    org = admin.identity.create_organization(args.name)
    out.record("Created organization", render.organization(org))


def orgs_list(args: Namespace, admin: Admin, out: Output) -> None:
    orgs = [render.organization(o) for o in admin.identity.list_organizations()]
    out.table("organizations", orgs, ("id", "name", "createdAt"))


def users_create(args: Namespace, admin: Admin, out: Output) -> None:
    user = admin.identity.create_user(args.org, args.email, args.name, args.role)
    out.record("Created user", render.user(user))


def users_list(args: Namespace, admin: Admin, out: Output) -> None:
    users = [render.user(u) for u in admin.identity.list_users(args.org)]
    out.table("users", users, ("id", "email", "name", "role", "createdAt"))


def keys_create(args: Namespace, admin: Admin, out: Output) -> None:
    issued = admin.identity.issue_key(args.org, args.user, args.role, args.name)
    out.record("Issued API key", render.issued_key(issued))
    out.warn(render.SHOWN_ONCE)


def keys_rotate(args: Namespace, admin: Admin, out: Output) -> None:
    issued = admin.identity.rotate_key(args.key)
    out.record("Rotated API key (the previous value stops working)", render.issued_key(issued))
    out.warn(render.SHOWN_ONCE)


def keys_revoke(args: Namespace, admin: Admin, out: Output) -> None:
    revoked = admin.identity.revoke_key(args.key)
    out.record("Revoked API key", {"id": args.key, "status": revoked.status})
    # spec section 5: a cached lookup may live up to 10 minutes; the key event (published by the
    # outbox relay) makes running services drop it at once, the TTL is the bound when it cannot
    out.warn(
        "Note: running services drop this key when the key event reaches them (normally within a second); "
        "without the event broker, within their key cache TTL (at most 10 minutes)."
    )


def keys_list(args: Namespace, admin: Admin, out: Output) -> None:
    keys = [render.api_key(k) for k in admin.identity.list_keys(args.org)]
    out.table("keys", keys, ("id", "name", "role", "userId", "prefix", "status", "kind", "createdAt", "lastUsedAt"))
