"""The services' pytest plugin: a migrated database per run, a rolled-back transaction per test, the
app over it and a client, the same for every service.

It is registered as ``dps_testing`` by the ``pytest11`` entry point of ``dps-testing`` (libs/testing, a
test-only distribution that ``make test`` installs and ``make run`` and the images never do), so every
suite run with this venv has it, wherever pytest starts; a service's ``conftest.py`` need not import it.
``-p no:dps_testing`` turns it off.

A service's ``tests/conftest.py`` provides what is its own, two fixtures (a suite without them that
asks for ``app`` or ``database_url`` fails with a pointer here)::

    from dps_api.composition import build_http
    from dps_api.db import models  # noqa: F401  (every table on the metadata)
    from dps_api.db.base import Base
    from dps_api.settings import Settings

    @pytest.fixture(scope="session")
    def dps_service() -> ServiceUnderTest[Settings]:
        return ServiceUnderTest(package="dps_api", metadata=Base.metadata, create_app=build_http)

    @pytest.fixture(scope="module")
    def settings(database_url: str) -> Settings:
        return Settings.from_env({"DATABASE_URL": database_url, ...})

- ``dps_service`` (session scope): a ``dps_testing.service.ServiceUnderTest``: ``package``, the package that
  holds ``alembic.ini`` and ``migrations/`` (how ``dps_common.migrations`` and the service's
  ``db/migrate.py`` find them); ``metadata``, with every model imported onto it; ``create_app``,
  the composition root, called as ``create_app(settings, tx=tx)``.
- ``settings`` (module scope at most, as it depends on ``database_url``): the service's settings
  object as ``create_app`` takes it, built on the plugin's ``database_url`` and whatever else the
  service needs (the dispatcher's: a running api to ask about keys).

The plugin then provides:

- ``database_url``: a fresh database named after the package (and the xdist worker), migrated to
  head with the service's Alembic tree, made once per session and service and dropped (FORCE)
  when the session ends. The fixture is module-scoped so that one run can hold several services'
  suites (a session-scoped one would be computed once, for the first service, and handed to all);
  fixtures built on it are module- or function-scoped.
- ``engine``: an engine on it, likewise one per session and service, disposed at the end.
- ``tx`` (each test): ``Transactions`` whose every use case is a savepoint of one outer
  transaction, rolled back after the test (``dps_testing.transactions.rolled_back``).
  Tests whose workers run in other threads or processes use ``committed`` instead.
- ``app`` (each test): ``create_app(settings, tx=tx)``; ``client``: a ``falcon.testing.TestClient``.
- ``chromium`` (session) and ``page`` (each test): headless Chromium for what a person clicks
  (``dps_testing.browser``).

and, for the service's own ``tests/integration/test_*migrations.py``, the checks of
``dps_testing.migrations``: ``assert_schema_matches_models(engine, dps_service.metadata)``
(Alembic's autogenerate finds no difference), ``misnamed_constraints(engine) == []`` and
``assert_round_trip(dps_service.package, dps_service.metadata)`` (upgrade, downgrade to base
leaving nothing, upgrade again).

Under pytest-xdist each worker is a session of its own: it makes its own databases and virtual
hosts (the worker id is in their names) and its own processes on free ports. No test stops a server
the others share: a test that restarts a broker restarts a RabbitMQ node of its own
(``dps_testing.broker.private_broker``), so every test can run beside any other.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING

import falcon.testing
import pytest
from sqlalchemy import Engine

from dps_common import migrations
from dps_common.db import Transactions, make_engine
from dps_testing.browser import fresh_page, headless_chromium
from dps_testing.grouping import mark_group
from dps_testing.levels import LEVELS, UnknownLevel, level_of
from dps_testing.service import ServiceUnderTest, WsgiApp
from dps_testing.services import fresh_database
from dps_testing.transactions import rolled_back

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (--dist loadgroup)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks every test with its level from its folder (``dps_testing.levels``) where the
    rootdir's pytest.ini registers the levels, and with its pytest-xdist group (``dps_testing.grouping``:
    the contract suite is one group, any other test is grouped by its module); a test in a folder
    without a level fails collection."""
    if not any(line.split(":")[0].strip() == "unit" for line in config.getini("markers")):
        return
    rootdir = config.rootpath
    unknown: list[str] = []
    for item in items:
        try:
            level = level_of(item.path, rootdir)
        except ValueError:  # outside the rootdir
            continue
        except UnknownLevel as error:
            unknown.append(str(error))
            continue
        assert level in LEVELS
        item.add_marker(level)
        mark_group(item)
    if unknown:
        raise pytest.UsageError("\n".join(sorted(set(unknown))))


@pytest.fixture(scope="session")
def dps_service() -> ServiceUnderTest[object]:
    pytest.fail(
        "this suite's conftest.py must define the session fixture `dps_service` (a ServiceUnderTest):"
        " see the docstring of dps_testing.plugin",
        pytrace=False,
    )


@pytest.fixture(scope="module")
def settings() -> object:
    pytest.fail(
        "this suite's conftest.py must define the session fixture `settings` (what its create_app takes):"
        " see the docstring of dps_testing.plugin",
        pytrace=False,
    )


class ServiceDatabases:
    """One migrated database (and one engine on it) per service, made when first asked for and
    dropped when the session ends: one run can hold several services' suites."""

    def __init__(self) -> None:
        self._resources = ExitStack()
        self._urls: dict[str, str] = {}
        self._engines: dict[str, Engine] = {}

    def url(self, package: str) -> str:
        if package not in self._urls:
            url = self._resources.enter_context(fresh_database(f"{package}_test"))
            migrations.upgrade(package, url)
            self._urls[package] = url
        return self._urls[package]

    def engine(self, package: str) -> Engine:
        if package not in self._engines:
            engine = make_engine(self.url(package), application_name=f"{package}-tests")
            self._resources.callback(engine.dispose)  # before its database is dropped
            self._engines[package] = engine
        return self._engines[package]

    def close(self) -> None:
        self._resources.close()


@pytest.fixture(scope="session")
def dps_databases() -> Iterator[ServiceDatabases]:
    databases = ServiceDatabases()
    try:
        yield databases
    finally:
        databases.close()


# database_url and engine are module-scoped over session-long databases: a session-scoped fixture
# of the plugin would be computed once for the first service's suite and handed to the others'.
@pytest.fixture(scope="module")
def database_url(dps_databases: ServiceDatabases, dps_service: ServiceUnderTest[object]) -> str:
    """The service's database, migrated to head by its own Alembic tree; dropped when the session ends."""
    return dps_databases.url(dps_service.package)


@pytest.fixture(scope="module")
def engine(dps_databases: ServiceDatabases, dps_service: ServiceUnderTest[object]) -> Engine:
    return dps_databases.engine(dps_service.package)


@pytest.fixture
def tx(engine: Engine) -> Iterator[Transactions]:
    """Every use case's transaction becomes a savepoint of this test's outer transaction, rolled
    back at the end, so tests never see each other's rows."""
    with rolled_back(engine) as transactions:
        yield transactions


@pytest.fixture
def app(dps_service: ServiceUnderTest[object], settings: object, tx: Transactions) -> WsgiApp:
    return dps_service.create_app(settings, tx=tx)


@pytest.fixture
def client(app: WsgiApp) -> falcon.testing.TestClient:
    return falcon.testing.TestClient(app)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """Headless Chromium (``dps_testing.browser``), one per session."""
    with headless_chromium() as browser:
        yield browser


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    with fresh_page(chromium) as fresh:
        yield fresh
