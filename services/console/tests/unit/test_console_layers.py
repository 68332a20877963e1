"""The console's layers: its domain imports no framework (no Falcon, SQLAlchemy, Jinja2, requests),
its services no Falcon or Jinja2 (the pages are the resources' business)."""

from dps_common.testing.layers import PackageImports

import dps_console

FRAMEWORKS = {"falcon", "sqlalchemy", "jinja2", "requests", "alembic", "psycopg"}


def test_the_domain_imports_no_framework():
    imports = PackageImports(dps_console)
    domain = imports.modules_of("dps_console.domain")
    assert domain
    reached = set().union(*(imports.reached(m) for m in domain))
    assert imports.outside(reached, "dps_console.domain") == set()
    assert imports.frameworks_imported(reached, FRAMEWORKS) == set()


def test_the_services_render_nothing_and_know_no_http_framework():
    imports = PackageImports(dps_console)
    services = imports.modules_of("dps_console.services")
    reached = set().union(*(imports.reached(m) for m in services))
    assert imports.frameworks_imported(reached, {"falcon", "jinja2"}) == set()
    assert imports.outside(reached, "dps_console.services", "dps_console.domain", "dps_console.db") == set()
