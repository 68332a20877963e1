"""The init container of every Deployment: wait until the service's database is at least at the schema
this image was built for, so a new pod never serves on an old schema however the rollout and the
migration Job race (deploy/README.md, "Migrations before the rollout").

    python /opt/dps/wait_for_schema.py dps_api        # DATABASE_URL from the environment

Exits 0 once the database's Alembic revision is this image's head, or one this image does not know
(a newer release migrated it: expand/contract migrations keep the previous code working on it, so a
rollback or an old pod restarting during a rollout may start). Waits while the database is behind
or unreachable; exits 1 after ``--timeout`` seconds (the kubelet then restarts the init container).
Mounted from a ConfigMap (kustomize configMapGenerator): it uses only what the images already carry
(Alembic, SQLAlchemy, dps_common).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from dps_common.db import sqlalchemy_url
from dps_common.migrations import alembic_config


def schema_state(package: str, database_url: str) -> tuple[str, set[str], set[str]]:
    """("ready" | "behind", the database's revisions, this image's heads)."""
    script = ScriptDirectory.from_config(alembic_config(package, database_url))
    heads = set(script.get_heads())
    engine = create_engine(sqlalchemy_url(database_url), pool_pre_ping=False)
    try:
        with engine.connect() as connection:
            current = set(MigrationContext.configure(connection).get_current_heads())
    finally:
        engine.dispose()
    known = {revision.revision for revision in script.walk_revisions()}
    if current == heads or (current and not current <= known):
        return "ready", current, heads
    return "behind", current, heads


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("package", help="the service's package, which holds alembic.ini and migrations/")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--interval", type=float, default=2.0)
    args = parser.parse_args(argv)
    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url:
        print("wait_for_schema: DATABASE_URL is required", file=sys.stderr)
        return 2
    deadline = time.monotonic() + args.timeout
    last = ""
    while True:
        try:
            state, current, heads = schema_state(args.package, database_url)
            message = f"database at {sorted(current) or 'no revision'}, image head {sorted(heads)}"
        except Exception as exc:  # the database is not reachable yet: keep waiting, say why once
            state, message = "behind", f"database not reachable: {type(exc).__name__}: {exc}"
        if state == "ready":
            print(f"wait_for_schema: {args.package}: {message}: ready", flush=True)
            return 0
        if message != last:
            print(f"wait_for_schema: {args.package}: {message}: waiting for the migration Job", flush=True)
            last = message
        if time.monotonic() >= deadline:
            print(f"wait_for_schema: {args.package}: gave up after {args.timeout:.0f} s", file=sys.stderr)
            return 1
        time.sleep(args.interval)


if __name__ == "__main__":
    sys.exit(main())
