"""The direction of the dispatcher's dependencies: entry points (the HTTP resources, the event
consumer, the delivery worker's loop, the command line) use the use cases (``services/``, the
delivery use cases), which use the database and the domain, never the other way round. The consumer
and the worker never import each other: they meet through ``delivery/hand_over.py``, wired by ``cli``.

Two views are checked. The source view: what each module imports anywhere in its text, followed
through the package (an import inside a function counts: it runs sooner or later, and an import-time
check cannot see it). The runtime view: what importing a module pulls into a fresh interpreter, so
that a framework arriving through another package (``dps_common``, a third party) is seen too and
modules imported by other tests cannot hide anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dps_common.testing.layers import PackageImports, in_part, loaded_in_a_fresh_interpreter, top_level

import dps_webhooks

PACKAGE = "dps_webhooks"
ROOT = Path(dps_webhooks.__file__).parent
FRAMEWORKS = {"sqlalchemy", "falcon", "kombu", "psycopg", "pydantic", "prometheus_client", "alembic"}

ENTRY_POINTS = {
    "dps_webhooks.app",
    "dps_webhooks.wsgi",
    "dps_webhooks.routes",
    "dps_webhooks.cli",
    "dps_webhooks.consumer",
    "dps_webhooks.delivery.worker",
}
# What the use cases in services/ may use: each other, the database, the domain and the plain helpers.
USE_CASE_MAY_USE = (
    "dps_webhooks.services",
    "dps_webhooks.db",
    "dps_webhooks.domain",
    "dps_webhooks.schemas",
    "dps_webhooks.settings",
    "dps_webhooks.signing_secrets",
    "dps_webhooks.url_guard",
)


IMPORTS = PackageImports(dps_webhooks)
direct_imports, reached, modules_of, outside = IMPORTS.direct_imports, IMPORTS.reached, IMPORTS.modules_of, IMPORTS.outside


def package_modules() -> dict[str, Path]:
    return IMPORTS.modules


# --- the source view --------------------------------------------------------------------------------


def test_the_package_is_seen_whole():
    """The checks below are only as good as the module list they walk."""
    assert {"dps_webhooks.services.intake", "dps_webhooks.delivery.hand_over", "dps_webhooks.domain.backoff"} <= set(
        package_modules()
    )
    assert "dps_webhooks.db.work_queue" in reached("dps_webhooks.services.intake")


@pytest.mark.parametrize("module", modules_of("dps_webhooks.domain"))
def test_domain_code_uses_nothing_of_the_package_outside_the_domain_and_no_framework(module):
    assert not outside(reached(module), "dps_webhooks.domain")
    frameworks = top_level(set().union(*(direct_imports(m) for m in reached(module)))) & FRAMEWORKS
    assert not frameworks


@pytest.mark.parametrize("module", modules_of("dps_webhooks.services"))
def test_use_cases_never_reach_an_entry_point_or_the_workers_package(module):
    assert not outside(reached(module), *USE_CASE_MAY_USE)
    assert not {m for m in reached(module) if in_part(m, "dps_webhooks.delivery")}
    assert not reached(module) & (ENTRY_POINTS | set(modules_of("dps_webhooks.resources")))


@pytest.mark.parametrize(
    "module", [m for m in modules_of("dps_webhooks.delivery") if m != "dps_webhooks.delivery.worker"]
)
def test_delivery_use_cases_never_reach_an_entry_point_or_the_services(module):
    assert not reached(module) & (ENTRY_POINTS | set(modules_of("dps_webhooks.resources")))
    assert not {m for m in reached(module) if in_part(m, "dps_webhooks.services")}


@pytest.mark.parametrize("module", modules_of("dps_webhooks.db"))
def test_the_database_layer_uses_nothing_above_it(module):
    assert not outside(reached(module), "dps_webhooks.db", "dps_webhooks.domain")


def test_the_consumer_and_the_worker_meet_only_through_the_hand_over():
    consumer, worker = reached("dps_webhooks.consumer"), reached("dps_webhooks.delivery.worker")
    assert "dps_webhooks.delivery.worker" not in consumer
    assert {m for m in consumer if in_part(m, "dps_webhooks.delivery")} == {
        "dps_webhooks.delivery",
        "dps_webhooks.delivery.hand_over",
    }
    assert "dps_webhooks.consumer" not in worker
    assert not {m for m in worker if in_part(m, "dps_webhooks.services")}
    # cli is the one place that puts them together
    wiring = {m for m in package_modules() if {"dps_webhooks.consumer", "dps_webhooks.delivery.worker"} <= reached(m)}
    assert wiring == {"dps_webhooks.cli"}


@pytest.mark.parametrize("module", modules_of("dps_webhooks.resources"))
def test_http_resources_hold_no_sql(module):
    imported = direct_imports(module)
    assert "sqlalchemy" not in top_level(set(imported))
    assert not {m for m in imported if in_part(m, "dps_webhooks.db")}


# --- the runtime view --------------------------------------------------------------------------------


@pytest.mark.parametrize("module", modules_of("dps_webhooks.domain"))
def test_importing_domain_code_loads_no_framework_and_nothing_else_of_the_package(module):
    loaded = loaded_in_a_fresh_interpreter(module)
    assert not top_level(loaded) & FRAMEWORKS
    assert not outside({m for m in loaded if in_part(m, PACKAGE)}, "dps_webhooks.domain")


@pytest.mark.parametrize("module", modules_of("dps_webhooks.services"))
def test_importing_a_use_case_loads_no_entry_point(module):
    loaded = loaded_in_a_fresh_interpreter(module)
    assert not {m for m in loaded if in_part(m, "dps_webhooks.delivery")}
    assert not loaded & (ENTRY_POINTS | set(modules_of("dps_webhooks.resources")))


@pytest.mark.parametrize("module", ["dps_webhooks.cli", "dps_webhooks.consumer", "dps_webhooks.delivery.worker"])
def test_the_worker_process_loads_no_falcon(module):
    assert "falcon" not in top_level(loaded_in_a_fresh_interpreter(module))
