"""The connector's layers and its process without HTTP, checked by the one plan's rules, the same for
every service and with no exception of the connector's own (``dps_testing.layers``): the push worker
(``dealpricing-billing worker``), put together by ``composition.build_push_worker`` as its command
does, loads no falcon. The connector's outbox relay is the shared one, checked in libs/common. One
rule of its own: the answers and event data are rendered in ``schemas/`` alone, used by the resources
and the outbox adapter (that no use case reaches them is the suite's rule)."""

from __future__ import annotations

from dps_common.crypto import new_key
from dps_testing.layers import LayersSuite, Process, ServiceLayers

import dps_billing

ENV = {
    "DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/dps_billing_layers",
    "API_URL": "http://127.0.0.1:9",
    "INTERNAL_API_TOKEN": "layers-internal-token-0123456789abcdef",
    "CURSOR_SECRET": "layers-cursor-secret-0123456789abcdef0123",
    "BILLING_SECRET_KEY": "sk_test_layers",
    "BILLING_CLIENT_ID": "ca_layers",
    "BILLING_REDIRECT_URI": "http://127.0.0.1:9/billing/callback",
    "BILLING_WEBHOOK_SECRET": "whsec_layers",
    "BILLING_TOKEN_KEY": new_key(),
    "BILLING_STATE_SECRET": "layers-state-secret-0123456789abcdef",
}


class TestLayers(LayersSuite):
    layers = ServiceLayers(dps_billing, processes=(Process("push worker", "build_push_worker", ENV),))


def test_the_answers_are_rendered_in_the_schemas_alone():
    """The use cases (and the worker) return views, which the resources render through ``schemas/``, and
    the outbox adapter for the events' data: no module outside ``schemas/`` defines a ``render_``
    function (the callback's HTML page is a template of the resources)."""
    assert not TestLayers.layers.functions_outside("schemas", "render_")


def test_the_package_is_seen_whole():
    """The checks are only as good as the modules and imports they walk: some known ones."""
    layers = TestLayers.layers
    modules = set(layers.imports.modules)
    assert {"dps_billing.workers.pushes", "dps_billing.adapters.billing_platform.client",
            "dps_billing.services.push_run", "dps_billing.resources.routes"} <= modules
    assert "dps_billing.db.push_claims" in layers.imports.reached("dps_billing.services.push_queue")
    assert layers.layer_of("dps_billing.adapters.outbox") == "adapters"
    assert layers.layer_of("dps_billing.workers.pushes") == "workers"
