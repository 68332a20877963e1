"""The api's layers and its processes without HTTP, checked as every service's are
(``dps_testing.layers``): entry points (``composition``, ``wsgi``, the command line with its seed)
and the HTTP resources (with their route table and context) use the use cases (``services/``), which
store through ``db/`` and record their events through the outbox adapter (``adapters/``, handed to
them by the resources), all standing on the domain, which stands on nothing of the package and on no
framework. The operator's command line (``dealpricing-admin``), put together by
``composition.build_admin``, loads no falcon; the api's outbox relay (``dealpricing-outbox-relay``) is
the shared one, checked in libs/common. The answers and event data are rendered in ``schemas/``
alone, and used by the resources and the outbox adapter, never by a use case."""

from __future__ import annotations

import ast

from dps_testing.layers import LayersSuite, Process, ServiceLayers, loaded_in_a_fresh_interpreter

import dps_api

# as ``dealpricing-admin keys list`` puts itself together, without running (nothing connects)
BUILD_ADMIN = (
    "from dps_api.cli.parser import build_parser\n"
    "from dps_api.cli.settings import AdminSettings\n"
    "from dps_api.composition import build_admin\n"
    "build_parser()\n"
    "build_admin(AdminSettings.from_env()).close()"
)
ADMIN_ENV = {"DATABASE_URL": "postgresql+psycopg://nobody@127.0.0.1:9/none", "API_KEY_PEPPER": "p" * 32}


class ApiLayers(ServiceLayers):
    def source_offences(self) -> list[str]:
        """The command line imports ``composition`` (the plan: entry points call only it), whose
        ``build_http`` imports the HTTP parts inside the function: in the source the command line reaches
        falcon, at run time it never loads it (``test_a_process_without_http_loads_no_http_framework``
        builds it in a fresh interpreter). Until the fixed rules (issue 26), that check holds it alone."""
        return [o for o in super().source_offences() if not o.startswith("admin command line: ")]


class TestLayers(LayersSuite):
    layers = ApiLayers(
        dps_api,
        entry_points=("composition", "wsgi", "cli"),
        support=("adapters",),
        processes=(Process("admin command line", "dps_api.cli", BUILD_ADMIN, ADMIN_ENV),),
    )


def test_the_answers_are_rendered_in_the_schemas_alone():
    """The use cases return views, which the resources render through ``schemas/``, and the outbox
    adapter for the events' data: no module outside ``schemas/`` defines a ``render_`` function."""
    layers = TestLayers.layers
    outside = [m for m in layers.imports.modules if layers.layer_of(m) != "schemas"]
    assert not [f"{m}.{f.name}" for m in outside for f in ast.walk(ast.parse(layers.imports.modules[m].read_text()))
                if isinstance(f, ast.FunctionDef) and f.name.startswith("render_")]


def test_no_use_case_reaches_the_rendering():
    """No module of ``services/`` imports ``schemas/``, directly or through another module of the
    package (a support module included), and importing them all loads none."""
    layers = TestLayers.layers
    use_cases = layers.modules_in("services")
    assert use_cases
    assert not [f"{m} reaches {r}" for m in use_cases for r in sorted(layers.imports.reached(m))
                if layers.layer_of(r) == "schemas"]
    assert not [m for m in loaded_in_a_fresh_interpreter(*use_cases) if layers.layer_of(m) == "schemas"]


def test_the_package_is_seen_whole():
    """The checks are only as good as the modules and imports they walk: some known ones."""
    imports = TestLayers.layers.imports
    assert {"dps_api.cli", "dps_api.cli.commands", "dps_api.cli.seed", "dps_api.domain.quote_views"} <= set(imports.modules)
    assert "dps_api.db.models.catalog" in imports.reached("dps_api.services.pricebooks")
    assert TestLayers.layers.layer_of("dps_api.cli.seed.client") == "entry points"
    assert TestLayers.layers.layer_of("dps_api.resources.routes") == "resources"


def test_the_entry_points_call_only_composition():
    """``wsgi`` and the command line (its seed too) import, of the package, only ``composition``,
    ``settings`` and their own modules (the plan of issue 26): every part they run is built there."""
    imports = TestLayers.layers.imports
    offences = []
    for entry_point in ("dps_api.wsgi", "dps_api.cli"):
        allowed = ("dps_api.composition", "dps_api.settings", entry_point)
        offences += [f"{module} imports {name}" for module in imports.modules_of(entry_point)
                     for name in sorted(imports.outside(imports.direct_imports(module), *allowed))]
    assert not offences
