"""A database per service, as each owns its tables in production: on DATABASE_URL's server (the api
the URL's own database, the others ``dps_webhooks``, ``dps_billing`` and ``dps_console`` beside it,
or WEBHOOKS_DATABASE_URL / BILLING_DATABASE_URL / CONSOLE_DATABASE_URL), else on the embedded server
(``dps_api``, ``dps_webhooks``, ``dps_billing``, ``dps_console``). Each is created when missing, on
every start: a ``.run`` made before a service existed gets its database then."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from dps_dev.config import RunConfig
from dps_dev.postgres import embedded_postgres


@dataclass(frozen=True)
class Databases:
    api: str
    webhooks: str
    billing: str
    console: str
    description: str
    embedded: bool


@contextmanager
def databases(config: RunConfig) -> Iterator[Databases]:
    """The four databases, created where missing; the embedded server runs until the block ends."""
    if config.database_url:
        yield _beside(config, config.database_url, "DATABASE_URL's server", embedded=False)
        return
    pgdata = config.run_dir / "pgdata"
    with embedded_postgres(pgdata) as server_url:
        yield _beside(config, sibling_database(server_url, "dps_api"), f"embedded, data in {pgdata}", embedded=True)


def _beside(config: RunConfig, api_url: str, description: str, *, embedded: bool) -> Databases:
    return Databases(
        api=api_url,
        webhooks=config.webhooks_database_url or sibling_database(api_url, "dps_webhooks"),
        billing=config.billing_database_url or sibling_database(api_url, "dps_billing"),
        console=config.console_database_url or sibling_database(api_url, "dps_console"),
        description=description,
        embedded=embedded,
    )


def sibling_database(url: str, name: str) -> str:
    """The URL of database ``name`` on the same server, created if it does not exist."""
    with psycopg.connect(url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return urlunsplit(urlsplit(url)._replace(path="/" + name))
