"""The dispatcher's layers and its processes without HTTP, checked as every service's are
(``dps_testing.layers``), and two rules of its own: the answers are rendered in ``schemas/`` alone,
and the event consumer and the delivery worker never import each other; they meet through
``delivery/hand_over.py``, wired by ``cli``. The worker process (``dealpricing-webhooks worker``:
deliveries, the consumers, retention), put together as ``cli.run_worker`` does, loads no falcon."""

from __future__ import annotations

import ast

from dps_common.crypto import new_key
from dps_testing.layers_before import LayersSuite, Process, ServiceLayers, in_part, loaded_in_a_fresh_interpreter

import dps_webhooks

ENV = {
    "DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/dps_webhooks_layers",
    "API_URL": "http://127.0.0.1:9",
    "INTERNAL_API_TOKEN": "layers-internal-token-0123456789abcdef",
    "CURSOR_SECRET": "layers-cursor-secret-0123456789abcdef0123",
    "WEBHOOK_SECRET_KEY": new_key(),
}
BUILD_WORKER = """
from dps_common.db import Transactions, make_engine
from dps_webhooks.consumer import shard_consumers
from dps_webhooks.delivery.worker import DeliveryWorker
from dps_webhooks.settings import Settings
settings = Settings.from_env()
tx = Transactions.for_engine(make_engine(settings.database_url, pool_size=1))
shard_consumers(settings, tx, hand_over=DeliveryWorker(settings, tx, settings.database_url))
"""


class TestLayers(LayersSuite):
    layers = ServiceLayers(
        dps_webhooks,
        entry_points=("app", "wsgi", "routes", "context", "cli", "consumer", "delivery.worker"),
        support=("delivery", "signing_secrets", "url_guard", "metrics", "due_metrics"),
        processes=(Process("delivery worker and event consumer", "dps_webhooks.cli", BUILD_WORKER, ENV),),
    )


def test_the_consumer_and_the_worker_meet_only_through_the_hand_over():
    imports = TestLayers.layers.imports
    consumer, worker = imports.reached("dps_webhooks.consumer"), imports.reached("dps_webhooks.delivery.worker")
    assert "dps_webhooks.delivery.worker" not in consumer
    assert {m for m in consumer if in_part(m, "dps_webhooks.delivery")} == {
        "dps_webhooks.delivery",
        "dps_webhooks.delivery.hand_over",
    }
    assert "dps_webhooks.consumer" not in worker
    assert not {m for m in worker if in_part(m, "dps_webhooks.services")}
    # cli is the one place that puts them together
    wiring = {m for m in imports.modules if {"dps_webhooks.consumer", "dps_webhooks.delivery.worker"} <= imports.reached(m)}
    assert wiring == {"dps_webhooks.cli"}


def test_the_delivery_parts_and_the_use_cases_of_the_http_side_never_reach_each_other():
    imports = TestLayers.layers.imports
    delivery, services = imports.modules_of("dps_webhooks.delivery"), imports.modules_of("dps_webhooks.services")
    assert not {(m, r) for m in delivery for r in imports.reached(m) if in_part(r, "dps_webhooks.services")}
    assert not {(m, r) for m in services for r in imports.reached(m) if in_part(r, "dps_webhooks.delivery")}
    # and at run time (an import inside a function is not in the source view's graph)
    loaded = loaded_in_a_fresh_interpreter(*services)
    assert not {m for m in loaded if in_part(m, "dps_webhooks.delivery")}


def test_the_answers_are_rendered_in_the_schemas_alone():
    """The use cases return views and the resources render them through ``schemas/``: no layer below
    (the domain, ``db``, the use cases, the delivery parts) defines a ``render_`` function."""
    layers = TestLayers.layers
    below = [m for m in layers.imports.modules if layers.layer_of(m) in {"domain", "db", "services", "support"}]
    assert not [f"{m}.{f.name}" for m in below for f in ast.walk(ast.parse(layers.imports.modules[m].read_text()))
                if isinstance(f, ast.FunctionDef) and f.name.startswith("render")]


def test_the_package_is_seen_whole():
    """The checks are only as good as the modules and imports they walk: some known ones."""
    imports = TestLayers.layers.imports
    assert {"dps_webhooks.services.intake", "dps_webhooks.delivery.hand_over", "dps_webhooks.domain.backoff"} <= set(
        imports.modules
    )
    assert "dps_webhooks.db.models" in imports.reached("dps_webhooks.services.intake")
    assert TestLayers.layers.layer_of("dps_webhooks.delivery.worker") == "entry points"
