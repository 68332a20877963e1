"""The connector's layers and its processes without HTTP, checked as every service's are
(``dps_testing.layers``): the push worker (``dealpricing-billing worker``), put together as its
command does, loads no falcon. The connector's outbox relay is the shared one, checked in
libs/common. One rule of its own: the answers are rendered in ``schemas/`` alone."""

from __future__ import annotations

import ast

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
    layers = ServiceLayers(
        dps_billing,
        entry_points=("app", "wsgi", "routes", "context", "composition", "cli", "openapi_doc", "callback_page", "worker.loop"),
        support=("platform", "worker", "tokens", "snapshots", "oauth_state", "metrics"),
        processes=(
            Process(
                "push worker",
                "dps_billing.cli",
                "from dps_billing.settings import Settings\n"
                "from dps_billing.worker.loop import build_worker\n"
                "build_worker(Settings.from_env())",
                ENV,
            ),
        ),
    )


def test_the_answers_are_rendered_in_the_schemas_alone():
    """The use cases (and the worker) return views; only ``schemas/`` turns them into JSON answers and
    event data, so no layer below defines a ``render_`` function (the callback's HTML page is an entry point)."""
    layers = TestLayers.layers
    below = [m for m in layers.imports.modules if layers.layer_of(m) in {"domain", "db", "services", "support"}]
    assert not [f"{m}.{f.name}" for m in below for f in ast.walk(ast.parse(layers.imports.modules[m].read_text()))
                if isinstance(f, ast.FunctionDef) and f.name.startswith("render")]
