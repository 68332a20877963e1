"""The api's layers and its process without HTTP, checked by the one plan's rules, the same for every
service and with no exception of the api's own (``dps_testing.layers``): the domain stands on nothing
of the package and on no framework; the use cases (``services/``) store through ``db/`` and record
their events through the outbox adapter (``adapters/``), handed to them, never reaching ``schemas/``;
the resources call the use cases and render through ``schemas/``; ``wsgi`` and the command line (its
seed too) call only ``composition``. The operator's command line (``dealpricing-admin``), put together
by ``composition.build_admin``, loads no falcon; the api's outbox relay (``dealpricing-outbox-relay``)
is the shared one, checked in libs/common. One rule of its own: the answers and event data are
rendered in ``schemas/`` alone."""

from __future__ import annotations

from dps_testing.layers import LayersSuite, Process, ServiceLayers

import dps_api

# ``dealpricing-admin`` without running a command (nothing connects)
ADMIN_ENV = {"DATABASE_URL": "postgresql+psycopg://nobody@127.0.0.1:9/none", "API_KEY_PEPPER": "p" * 32}


class TestLayers(LayersSuite):
    layers = ServiceLayers(
        dps_api,
        processes=(Process("admin command line", "build_admin", ADMIN_ENV, settings="cli.settings.AdminSettings"),),
    )


def test_the_answers_are_rendered_in_the_schemas_alone():
    """The use cases return views, which the resources render through ``schemas/``, and the outbox
    adapter for the events' data: no module outside ``schemas/`` defines a ``render_`` function."""
    assert not TestLayers.layers.functions_outside("schemas", "render_")


def test_the_package_is_seen_whole():
    """The checks are only as good as the modules and imports they walk: some known ones."""
    layers = TestLayers.layers
    assert {"dps_api.cli", "dps_api.cli.commands", "dps_api.cli.seed", "dps_api.domain.quote_views"} <= set(
        layers.imports.modules
    )
    assert "dps_api.db.models.catalog" in layers.imports.reached("dps_api.services.pricebooks")
    assert layers.layer_of("dps_api.cli.seed.client") == "cli"
    assert layers.layer_of("dps_api.resources.routes") == "resources"
