"""Fixtures for the api's suite: a migrated PostgreSQL database per run, a rolled-back transaction
per test, the app over it, and an organization with a key of each role."""

from __future__ import annotations

from collections.abc import Iterator

import falcon.testing
import pytest
from sqlalchemy import Engine

from dps_common.db import Transactions, make_engine
from dps_common.testing.services import fresh_database
from dps_common.testing.transactions import rolled_back

from dps_api.app import create_app
from dps_api.db.migrate import upgrade
from dps_api.services.identity import IdentityService
from dps_api.settings import Settings

from api_orgs import Org, make_org

PEPPER = "test-pepper-0123456789abcdef0123456789abcdef"
CURSOR_SECRET = "test-cursor-secret-0123456789abcdef0123456789"


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    with fresh_database("dps_api_test") as url:
        upgrade(url)
        yield url


@pytest.fixture(scope="session")
def settings(database_url: str) -> Settings:
    return Settings.from_env(
        {"DATABASE_URL": database_url, "API_KEY_PEPPER": PEPPER, "CURSOR_SECRET": CURSOR_SECRET}
    )


@pytest.fixture(scope="session")
def engine(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def tx(engine: Engine) -> Iterator[Transactions]:
    """Every use case's transaction becomes a savepoint of this test's outer transaction,
    rolled back at the end, so tests never see each other's rows."""
    with rolled_back(engine) as transactions:
        yield transactions


@pytest.fixture
def app(settings: Settings, tx: Transactions) -> falcon.App:
    return create_app(settings, tx=tx)


@pytest.fixture
def client(app: falcon.App) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(app)


@pytest.fixture
def identity(app: falcon.App, settings: Settings) -> IdentityService:
    ctx = app.context
    return IdentityService(ctx.tx, settings.api_key_pepper, ctx.now, ctx.authenticator.forget)


@pytest.fixture
def org(identity: IdentityService) -> Org:
    return make_org(identity, "Acme Corp")


@pytest.fixture
def other_org(identity: IdentityService) -> Org:
    return make_org(identity, "Globex")
