"""The dispatcher's layers and its process without HTTP, checked by the one plan's rules, the same
for every service and with no exception of the dispatcher's own (``dps_testing.layers``): the webhook
sender and its address guard, signing secrets, the events queue and the metrics exporters are
``adapters/``; the delivery, consumer and retention loops are ``workers/``, none importing another;
``composition`` builds the HTTP app and the worker process, which ``wsgi`` and ``cli`` call. The
worker process (``dealpricing-webhooks worker``: deliveries, the consumers, retention), put together
by ``composition.build_worker``, loads no falcon. Rules said here too: the consumer and the delivery
loop meet only through ``services/hand_over.py``; no use case makes an event itself (the events
adapter renders the test delivery's); the answers are rendered in ``schemas/``."""

from __future__ import annotations

import ast

from dps_common.crypto import new_key
from dps_testing.layers import LayersSuite, Process, ServiceLayers

import dps_webhooks

ENV = {
    "DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/dps_webhooks_layers",
    "API_URL": "http://127.0.0.1:9",
    "INTERNAL_API_TOKEN": "layers-internal-token-0123456789abcdef",
    "CURSOR_SECRET": "layers-cursor-secret-0123456789abcdef0123",
    "WEBHOOK_SECRET_KEY": new_key(),
}


class TestLayers(LayersSuite):
    layers = ServiceLayers(dps_webhooks, processes=(Process("worker process", "build_worker", ENV),))


def test_the_consumer_and_the_worker_meet_only_through_the_hand_over():
    imports = TestLayers.layers.imports
    consumer, worker = imports.reached("dps_webhooks.workers.consumers"), imports.reached("dps_webhooks.workers.deliveries")
    assert "dps_webhooks.workers.deliveries" not in consumer and "dps_webhooks.workers.consumers" not in worker
    assert "dps_webhooks.services.hand_over" in consumer
    # composition is the one place that puts them together (and the entry points, through it)
    wiring = {m for m in imports.modules
              if {"dps_webhooks.workers.consumers", "dps_webhooks.workers.deliveries"} <= imports.reached(m)}
    assert wiring == {"dps_webhooks.composition", "dps_webhooks.cli", "dps_webhooks.wsgi"}


def test_the_answers_are_rendered_in_the_schemas_alone():
    """The use cases return views and the resources render them through ``schemas/``: no module
    outside ``schemas/`` defines a function whose name starts with ``render``."""
    assert not TestLayers.layers.functions_outside("schemas", "render")


def test_no_use_case_makes_an_event():
    """The test delivery's use case hands the endpoint's view to the events adapter
    (``adapters/events.py``), which renders the event: no use case calls ``envelope`` itself."""
    layers = TestLayers.layers
    calls = [f"{m}: envelope()" for m in layers.modules_in("services")
             for node in ast.walk(ast.parse(layers.imports.modules[m].read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "envelope"]
    assert not calls


def test_the_package_is_seen_whole():
    """The checks are only as good as the modules and imports they walk: some known ones."""
    imports = TestLayers.layers.imports
    assert {"dps_webhooks.services.intake", "dps_webhooks.services.hand_over", "dps_webhooks.domain.backoff",
            "dps_webhooks.workers.deliveries", "dps_webhooks.adapters.url_guard"} <= set(imports.modules)
    assert "dps_webhooks.db.models" in imports.reached("dps_webhooks.services.intake")
    assert TestLayers.layers.layer_of("dps_webhooks.workers.deliveries") == "workers"
    assert TestLayers.layers.layer_of("dps_webhooks.resources.routes") == "resources"


def test_every_folder_of_modules_is_a_package_the_image_installs():
    """``packages.find`` (pyproject) installs only folders with an ``__init__.py``: a folder of
    modules without one works from the source tree and is missing from the image."""
    from pathlib import Path

    from setuptools import find_packages

    root = Path(dps_webhooks.__file__).parent
    folders = {".".join(("dps_webhooks", *p.parent.relative_to(root).parts)).rstrip(".")
               for p in root.rglob("*.py") if "migrations" not in p.relative_to(root).parts}
    assert folders <= set(find_packages(str(root.parent)))
