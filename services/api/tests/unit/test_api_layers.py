"""The api's layers and its processes without HTTP, checked as every service's are
(``dps_testing.layers``): entry points (the HTTP resources, ``routes``, ``app``, ``wsgi``, the
command line, the seed) use the use cases (``services/``), which store through ``db/`` and record
their events through the outbox adapter (``adapters/``, handed to them by the resources), all standing
on the domain, which stands on nothing of the package and on no framework. The operator's command line
(``dealpricing-admin``) loads no falcon; the api's outbox relay (``dealpricing-outbox-relay``) is the
shared one, checked in libs/common. The answers and event data are rendered in ``schemas/`` alone, and
used by the resources and the outbox adapter, never by a use case."""

from __future__ import annotations

import ast

from dps_testing.layers import LayersSuite, Process, ServiceLayers, loaded_in_a_fresh_interpreter

import dps_api


class TestLayers(LayersSuite):
    layers = ServiceLayers(
        dps_api,
        entry_points=("app", "wsgi", "routes", "context", "cli", "seed"),
        support=("adapters",),
        processes=(
            Process("admin command line", "dps_api.cli", "from dps_api.cli.parser import build_parser\nbuild_parser()"),
        ),
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
    assert {"dps_api.cli", "dps_api.cli.commands", "dps_api.seed", "dps_api.domain.quote_views"} <= set(imports.modules)
    assert "dps_api.db.models.catalog" in imports.reached("dps_api.services.pricebooks")
    assert TestLayers.layers.layer_of("dps_api.seed.client") == "entry points"
