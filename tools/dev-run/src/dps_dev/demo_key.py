"""The demo admin's API key of ``make run``: issued once, kept in ``.run/demo-key.env`` (0600; the
database holds only its keyed hash) and shown again on every start while it still works. A new one
is issued only when the kept one no longer authenticates (revoked, rotated, the pepper replaced);
any other still-active ``make run`` key of the demo admin (earlier runs minted one per start) is
revoked, so one start or fifty, one live demo admin key."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

from dps_common.auth.keys import parse_key, secret_matches
from dps_common.auth.scopes import Role

from dps_api.cli.seed import DemoSeed, SeedError, seed_demo
from dps_api.composition import build_seed
from dps_api.db.models.identity import KeyStatus
from dps_api.services.identity import DatabaseKeyStore, IdentityService
from dps_api.settings import Settings
from dps_dev.secrets_file import read_env_file, write_env_file

KEY_FILE = "demo-key.env"
NAME_PREFIX = "make run "  # the demo admin's keys issued by make run: "make run 2026-11-25 17:00:00 UTC"


def seed_with_demo_key(settings: Settings, run_dir: Path) -> DemoSeed:
    """The idempotent demo seed, then the demo admin's key: the kept one, else a new one."""
    seeding = build_seed(settings)
    try:
        demo = seed_demo(seeding)
        if demo.organization_id is None:
            raise SeedError("the demo organization was not seeded")
        identity = seeding.identity
        admin_id = demo.users["admin"]
        path = run_dir / KEY_FILE
        kept = read_env_file(path).get("DPS_DEMO_KEY", "")
        key = kept if _still_works(seeding.keys, settings.api_key_pepper, kept, admin_id) else ""
        if not key:
            stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            key = identity.issue_key(demo.organization_id, admin_id, Role.ADMIN, NAME_PREFIX + stamp).secret
            write_env_file(path, {"DPS_DEMO_KEY": key}, "# make run's demo admin API key (the database keeps its hash only)\n")
        _revoke_others(identity, demo.organization_id, admin_id, key)
        demo.admin_key = key
        return demo
    finally:
        seeding.close()


def _still_works(store: DatabaseKeyStore, pepper: bytes, key: str, admin_id: UUID) -> bool:
    parsed = parse_key(key) if key else None
    record = store.find(parsed.key_id) if parsed else None
    return bool(
        parsed and record and record.principal.user_id == admin_id and record.principal.role == Role.ADMIN
        and secret_matches(pepper, parsed.secret, record.secret_hash)
    )


def _revoke_others(identity: IdentityService, organization_id: UUID, admin_id: UUID, key: str) -> None:
    parsed = parse_key(key)
    in_use = parsed.key_id if parsed else ""
    for row in identity.list_keys(organization_id):
        if (row.user_id == admin_id and row.status == KeyStatus.ACTIVE and row.name.startswith(NAME_PREFIX)
                and row.key_id != in_use):
            identity.revoke_key(row.id)
