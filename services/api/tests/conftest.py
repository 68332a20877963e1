"""What the api's suite tells the test plugin (``dps_testing.plugin``, which provides the
migrated database, the rolled-back transaction per test, ``app`` and ``client``), and an
organization with a key of each role."""

from __future__ import annotations

import falcon
import pytest

from dps_testing.rate_limits import UNTHROTTLED
from dps_testing.service import ServiceUnderTest

from dps_api.composition import build_http
from dps_api.db import models  # noqa: F401  (every table on the metadata)
from dps_api.db.base import Base
from dps_api.services.identity import IdentityService
from dps_api.settings import Settings

from api_orgs import Org, make_org

PEPPER = "test-pepper-0123456789abcdef0123456789abcdef"
CURSOR_SECRET = "test-cursor-secret-0123456789abcdef0123456789"


@pytest.fixture(scope="session")
def dps_service() -> ServiceUnderTest[Settings]:
    return ServiceUnderTest(package="dps_api", metadata=Base.metadata, create_app=build_http)


@pytest.fixture(scope="module")
def settings(database_url: str) -> Settings:
    return Settings.from_env(
        {"DATABASE_URL": database_url, "API_KEY_PEPPER": PEPPER, "CURSOR_SECRET": CURSOR_SECRET, **UNTHROTTLED}
    )


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
