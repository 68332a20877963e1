"""What the dispatcher's suite tells the test plugin (``dps_testing.plugin``, which provides
the migrated database, the rolled-back transaction per test, ``app`` and ``client``; tests that run
workers in other threads or processes use committed data on their own database instead), and the
api that the dispatcher asks to check keys:

- ``org`` and ``other_org``: organizations whose keys the api's internal contract accepts, served by
  ``dps_testing.fake_api`` (no api process, no api database), for every test that only needs a key
  that works;
- ``api_env``, ``admin`` and ``api_org``: a real api's database, its admin command line and an
  organization it made, for the tests of what the api itself does with keys (revocation, rotation,
  its cache, its logs); they start the api under gunicorn with the settings they test.

The dispatcher imports no api code: the api is a process (or its contract) here, as in production."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from dps_common.crypto import new_key
from dps_testing.fake_api import FakeApi
from dps_testing.processes import write_tls_files
from dps_testing.provisioning import Admin, Org
from dps_testing.rate_limits import UNTHROTTLED
from dps_testing.real_api import api_database
from dps_testing.service import ServiceUnderTest

from dps_webhooks.composition import build_http
from dps_webhooks.db import models  # noqa: F401  (every table on the metadata)
from dps_webhooks.db.base import Base
from dps_webhooks.settings import Settings

PEPPER = "webhooks-test-pepper-0123456789abcdef0123456789"
CURSOR_SECRET = "webhooks-test-cursor-0123456789abcdef0123456789"
INTERNAL_TOKEN = "webhooks-test-internal-token-0123456789abcdef"


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return write_tls_files(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="session")
def api_env() -> Iterator[dict[str, str]]:
    """The api's environment, on its own freshly migrated database."""
    with api_database("dps_wh_api", API_KEY_PEPPER=PEPPER, CURSOR_SECRET=CURSOR_SECRET, INTERNAL_API_TOKEN=INTERNAL_TOKEN) as env:
        yield env


@pytest.fixture(scope="session")
def admin(api_env: dict[str, str]) -> Admin:
    return Admin(api_env)


@pytest.fixture(scope="session")
def api_org(admin: Admin) -> Org:
    """An organization of the real api (``api_env``), made with its admin command line."""
    return admin.organization("Acme Corp")


@pytest.fixture(scope="session")
def fake_api() -> Iterator[FakeApi]:
    api = FakeApi(INTERNAL_TOKEN)
    yield api
    api.stop()


@pytest.fixture(scope="session")
def org(fake_api: FakeApi) -> Org:
    """An organization with an admin, a user and a view-only member, each with a key."""
    return fake_api.provisioned("Acme Corp")


@pytest.fixture(scope="session")
def other_org(fake_api: FakeApi) -> Org:
    return fake_api.provisioned("Globex")


@pytest.fixture(scope="session")
def dps_service() -> ServiceUnderTest[Settings]:
    return ServiceUnderTest(package="dps_webhooks", metadata=Base.metadata, create_app=build_http)


@pytest.fixture(scope="module")
def settings_env(database_url: str, fake_api: FakeApi, tls_files: dict[str, str]) -> dict[str, str]:
    """The dispatcher's environment (tests add to it); receivers on loopback are allowed."""
    return {
        "DATABASE_URL": database_url,
        "CURSOR_SECRET": CURSOR_SECRET,
        "WEBHOOK_SECRET_KEY": new_key(),
        "API_URL": fake_api.url,  # tests of the real api's answers pass theirs (API_URL, API_CA_FILE)
        "API_CA_FILE": tls_files["ca"],
        "INTERNAL_API_TOKEN": INTERNAL_TOKEN,
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8,::1/128",
        "WEBHOOK_RECEIVER_CA_FILE": tls_files["ca"],
        **UNTHROTTLED,
    }


@pytest.fixture(scope="module")
def settings(settings_env: dict[str, str]) -> Settings:
    return Settings.from_env(settings_env)


@pytest.fixture(scope="module")
def make_settings(settings_env: dict[str, str]) -> Callable[..., Settings]:
    """Settings with overrides, e.g. ``make_settings(WEBHOOK_RETRY_GAPS_SECONDS="0,0")``."""

    def make(**overrides: str) -> Settings:
        return Settings.from_env({**settings_env, **overrides})

    return make
