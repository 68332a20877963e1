"""The direction of the api's dependencies: entry points (the HTTP resources, ``routes``, ``app``,
``wsgi``, the command line, the seed and dev tools) use the use cases (``services/``), which render
through ``schemas/`` and store through ``db/``; both of those stand on the domain, which stands on
nothing of the package and on no framework. Nothing points back up: ``schemas/`` never reaches a use
case, ``db/`` never reaches a use case or a schema, and a use case never reaches an entry point.

Two views are checked. The source view: what each module imports anywhere in its text (an import
inside a function or under ``TYPE_CHECKING`` counts: it names the module it depends on), followed
through the package. The runtime view: what importing a module pulls into a fresh interpreter, so
that a framework arriving through another package (``dps_common``, a third party) is seen too and
modules imported by other tests cannot hide anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dps_common.testing.layers import PackageImports, in_part, loaded_in_a_fresh_interpreter, top_level

import dps_api

PACKAGE = "dps_api"
ROOT = Path(dps_api.__file__).parent
FRAMEWORKS = {"sqlalchemy", "falcon", "pydantic", "psycopg", "alembic", "prometheus_client"}
SQL = {"sqlalchemy", "psycopg"}

DOMAIN = "dps_api.domain"
DB = "dps_api.db"
SCHEMAS = "dps_api.schemas"
SERVICES = "dps_api.services"
RESOURCES = "dps_api.resources"
# The composition root and everything that drives the use cases from outside.
ENTRY_POINTS = (
    RESOURCES,
    "dps_api.routes",
    "dps_api.app",
    "dps_api.wsgi",
    "dps_api.context",
    "dps_api.cli",
    "dps_api.seed",
)
# Configuration is a plain value the entry points read; it sits beside the layers, below them all.
SETTINGS = "dps_api.settings"


IMPORTS = PackageImports(dps_api)
direct_imports, reached, modules_of, outside = IMPORTS.direct_imports, IMPORTS.reached, IMPORTS.modules_of, IMPORTS.outside


def package_modules() -> dict[str, Path]:
    return IMPORTS.modules


def frameworks_imported(modules: frozenset[str] | set[str]) -> set[str]:
    return IMPORTS.frameworks_imported(modules, FRAMEWORKS)


# --- the source view --------------------------------------------------------------------------------


def test_the_package_is_seen_whole():
    """The checks below are only as good as the module list and the import walk they use."""
    assert {
        "dps_api.domain.money",
        "dps_api.db.models.catalog",
        "dps_api.schemas.catalog",
        "dps_api.services.catalog",
        "dps_api.resources.products",
        "dps_api.cli",
        "dps_api.seed",
    } <= set(package_modules())
    assert not any(in_part(m, "dps_api.migrations") for m in package_modules())
    assert {"dps_api.db.models.catalog", "dps_api.schemas.catalog", "dps_api.domain.money"} <= reached(
        "dps_api.services.pricebooks"
    )
    assert "dps_api.services.catalog" in reached("dps_api.app")
    # every module belongs to exactly one layer named here
    layers = (DOMAIN, DB, SCHEMAS, SERVICES, SETTINGS, *ENTRY_POINTS)
    assert not outside(set(package_modules()), *layers)


def test_the_walk_sees_imports_anywhere_in_a_module(tmp_path, monkeypatch):
    """An import inside a function, or one only type checkers run, is a dependency all the same."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from dps_api.services.catalog import CatalogService\n"
        "def later():\n    from ..db import base\n    import falcon\n"
    )
    fake = tmp_path / "schemas" / "probe.py"
    fake.parent.mkdir()
    fake.write_text(source)
    imports = PackageImports(dps_api)  # a walk of its own: the probe stays out of the shared one
    monkeypatch.setitem(imports.modules, "dps_api.schemas.probe", fake)
    assert {"dps_api.services.catalog", "dps_api.db.base", "falcon"} <= imports.direct_imports("dps_api.schemas.probe")


@pytest.mark.parametrize("module", modules_of(DOMAIN))
def test_domain_code_uses_nothing_of_the_package_outside_the_domain_and_no_framework(module):
    assert not outside(reached(module), DOMAIN)
    assert not frameworks_imported(reached(module))


@pytest.mark.parametrize("module", modules_of(SCHEMAS))
def test_schemas_render_from_the_domain_and_never_reach_a_use_case(module):
    assert not outside(reached(module), SCHEMAS, DOMAIN)


@pytest.mark.parametrize("module", modules_of(DB))
def test_the_database_layer_uses_nothing_above_it(module):
    assert not outside(reached(module), DB, DOMAIN)


@pytest.mark.parametrize("module", modules_of(SERVICES))
def test_use_cases_use_the_layers_below_and_never_reach_an_entry_point(module):
    assert not outside(reached(module), SERVICES, SCHEMAS, DB, DOMAIN)
    assert not {m for m in reached(module) if any(in_part(m, part) for part in ENTRY_POINTS)}


@pytest.mark.parametrize("module", [SETTINGS])
def test_settings_stand_on_nothing_of_the_package(module):
    assert not outside(reached(module), SETTINGS)


@pytest.mark.parametrize("module", modules_of(RESOURCES))
def test_http_resources_hold_no_sql(module):
    imported = direct_imports(module)
    assert not top_level(set(imported)) & SQL
    assert not {m for m in imported if in_part(m, DB)}


# --- the runtime view --------------------------------------------------------------------------------


def _loaded_of_the_package(module: str) -> tuple[set[str], set[str]]:
    loaded = loaded_in_a_fresh_interpreter(module)
    return loaded, {m for m in loaded if in_part(m, PACKAGE)}


@pytest.mark.parametrize("module", modules_of(DOMAIN))
def test_importing_domain_code_loads_no_framework_and_nothing_else_of_the_package(module):
    loaded, ours = _loaded_of_the_package(module)
    assert not top_level(loaded) & FRAMEWORKS
    assert not outside(ours, DOMAIN)


@pytest.mark.parametrize("module", modules_of(SCHEMAS))
def test_importing_a_schema_loads_no_use_case_and_no_database_code(module):
    loaded, ours = _loaded_of_the_package(module)
    assert not outside(ours, SCHEMAS, DOMAIN)
    assert not top_level(loaded) & SQL


@pytest.mark.parametrize("module", modules_of(DB))
def test_importing_database_code_loads_nothing_above_it(module):
    _, ours = _loaded_of_the_package(module)
    assert not outside(ours, DB, DOMAIN)


@pytest.mark.parametrize("module", modules_of(SERVICES))
def test_importing_a_use_case_loads_no_entry_point(module):
    _, ours = _loaded_of_the_package(module)
    assert not outside(ours, SERVICES, SCHEMAS, DB, DOMAIN)
