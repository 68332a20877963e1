"""The layers of libs/common, and the layers check every service uses (``dps_testing.layers``).

Code that serves no HTTP imports no falcon: the modules below are imported one after another in one
fresh interpreter (so modules imported by other tests cannot hide an import), and the outbox relay
(``dps-outbox-relay``, the api's ``dealpricing-outbox-relay``, the connector's relay) is put together
as its command does in one of its own. ``auth`` never imports ``http`` (``http`` builds on ``auth``,
not the other way round). Then the check itself, on a package made for it: it sees imports anywhere
in a module, and it reports each kind of offence."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from dps_testing.layers import (
    HTTP,
    LAYERS,
    PackageImports,
    Process,
    ServiceLayers,
    first_to_load,
    http_loaded_by,
    in_part,
    loaded_in_a_fresh_interpreter,
    loaded_step_by_step,
    reach,
)

NO_HTTP_MODULES = [
    "dps_common.auth.authenticator",
    "dps_common.auth.introspection",
    "dps_common.auth.revocations",
    "dps_common.clock",
    "dps_common.crypto",
    "dps_common.db",
    "dps_common.events.catalogue",
    "dps_common.events.envelope",
    "dps_common.events.headers",
    "dps_common.json",
    "dps_common.keyset",
    "dps_common.logs",
    "dps_common.messaging",
    "dps_common.messaging.consumer",
    "dps_common.messaging.subscriber",
    "dps_common.migrations",
    "dps_common.openapi.examples",
    "dps_common.outbox",
    "dps_common.outbox.migration",
    "dps_common.outbox.relay.cli",
    "dps_common.paging",
    "dps_common.process_server",
    "dps_common.settings",
    "dps_common.work_queue",
]

BUILD_RELAY = (
    "from dps_common.db import Transactions, make_engine\n"
    "from dps_common.outbox.relay.relay import OutboxRelay\n"
    "from dps_common.outbox.relay.settings import RelaySettings\n"
    "settings = RelaySettings.from_env()\n"
    "OutboxRelay(settings, Transactions.for_engine(make_engine(settings.database_url, pool_size=1)))"
)
RELAY_ENV = {"DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/dps_relay_layers"}


def test_modules_for_processes_without_http_load_no_http_framework():
    assert first_to_load(loaded_step_by_step(NO_HTTP_MODULES), HTTP) == {}


def test_the_outbox_relay_loads_no_http_framework():
    assert http_loaded_by("outbox relay", "dps_common.outbox.relay.cli", BUILD_RELAY, RELAY_ENV) == []


def test_auth_never_imports_http():
    modules = loaded_in_a_fresh_interpreter(
        "dps_common.auth.authenticator", "dps_common.auth.introspection", "dps_common.auth.scopes"
    )
    assert not {m for m in modules if in_part(m, "dps_common.http")}


# --- the check itself -----------------------------------------------------------------------------
# A package made for it, with one offence against each rule of the table (dps_testing.layers.LAYERS)
# and modules that keep to them: the check reports each offence, and no more.

PROBE = "layers_probe"
PROBE_FILES = {
    "__init__.py": "",
    "settings.py": "import sqlalchemy\n\nclass Settings:\n    @classmethod\n    def from_env(cls):\n        return cls()\n",
    "stray.py": "",  # in no layer
    "domain/__init__.py": "",
    "domain/money.py": "import falcon\n",  # a framework in the domain
    "domain/rules.py": "from ..db import base\n",  # the domain reaching up
    "domain/values.py": "def render_total():\n    pass\n",  # rendering outside schemas/
    "db/__init__.py": "",
    "db/base.py": "import sqlalchemy\n",
    "db/orders.py": "from layers_probe.schemas import views\n",  # the store rendering
    "schemas/__init__.py": "",
    "schemas/views.py": "from layers_probe.domain import values\n\ndef render_order():\n    pass\n",
    "schemas/bodies.py": "import psycopg\n",  # SQL in the rendering
    "adapters/__init__.py": "",
    "adapters/outbox.py": "from layers_probe.schemas import views\n",  # an adapter renders: allowed
    "adapters/mail.py": "from layers_probe.services import orders\n",  # an adapter calling a use case
    "services/__init__.py": "",
    "services/orders.py": "from layers_probe.adapters import outbox\n",  # a use case reaching the rendering
    "services/late.py": "def later():\n    from layers_probe.resources import orders\n",  # a resource, in a function
    "services/people.py": "from layers_probe.db import base\nimport gunicorn\n",  # HTTP in a use case
    "resources/__init__.py": "",
    "resources/orders.py": "import falcon\nfrom sqlalchemy import select\nfrom layers_probe.db import base\nfrom layers_probe.services import orders\n",
    "workers/__init__.py": "",
    "workers/push.py": "from layers_probe.workers import mail\nfrom layers_probe.db import base\n",  # another worker, a store
    "workers/mail/__init__.py": "from layers_probe.workers.mail import loop\n",  # a worker of two modules: allowed
    "workers/mail/loop.py": "from layers_probe.adapters import outbox\nfrom layers_probe.services import orders\n",
    "composition.py": (
        "def build_http(settings):\n    import falcon\n    from layers_probe.resources import orders\n\n"
        "def build_push(settings):\n    from layers_probe.resources import orders\n    from layers_probe.workers import push\n\n"
        "def build_mail(settings):\n    from layers_probe.workers import mail\n"
    ),
    "wsgi.py": "from layers_probe.resources import orders\n",  # an entry point past composition
    "cli/__init__.py": "from layers_probe import composition\nfrom layers_probe.cli import parser\n",
    "cli/parser.py": "from layers_probe.services import orders\n",  # the command line calling a use case
}


@pytest.fixture(scope="module")
def probe_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("probe")
    for name, text in PROBE_FILES.items():
        path = root / PROBE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.fixture(scope="module")
def probe(probe_root: Path) -> ServiceLayers:
    sys.path.insert(0, str(probe_root))
    try:
        package = __import__(PROBE)
    finally:
        sys.path.remove(str(probe_root))
    env = {"PYTHONPATH": str(probe_root)}
    return ServiceLayers(package, processes=(
        Process("push worker", "build_push", env), Process("mail worker", "build_mail", env),
        Process("retention", "build_retention", env),
    ))


def test_the_table_names_every_layer_and_what_it_may_reach():
    assert [layer.name for layer in LAYERS] == [
        "domain", "settings", "db", "schemas", "adapters", "services", "resources", "workers", "composition", "wsgi", "cli",
    ]
    assert reach("services") == {"services", "domain", "db", "adapters", "settings"}  # not schemas, through adapters
    assert reach("resources") == {"resources", "services", "schemas", "domain", "settings", "db", "adapters"}
    assert {layer.name for layer in LAYERS if "workers" in reach(layer.name)} == {"workers", "composition", "wsgi", "cli"}


def test_the_walk_sees_imports_anywhere_in_a_module(tmp_path: Path, probe: ServiceLayers):
    """An import inside a function, or one only type checkers run, is a dependency all the same."""
    source = textwrap.dedent("""\
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from layers_probe.services.orders import later
        def later():
            from ..db import base
            import falcon
        """)
    fake = tmp_path / "probe.py"
    fake.write_text(source)
    imports = PackageImports(probe.package)  # a walk of its own: the probe stays out of the shared one
    imports.modules[f"{PROBE}.schemas.probe"] = fake
    assert {f"{PROBE}.services.orders", f"{PROBE}.db.base", "falcon"} <= imports.direct_imports(f"{PROBE}.schemas.probe")
    assert {f"{PROBE}.db", f"{PROBE}.db.base", f"{PROBE}.services.orders"} <= imports.reached(f"{PROBE}.schemas.probe")


def test_the_check_places_every_module_by_its_folder(probe: ServiceLayers):
    assert probe.layer_of(f"{PROBE}.domain.money") == "domain"
    assert probe.layer_of(f"{PROBE}.workers.mail.loop") == "workers"
    assert probe.layer_of(f"{PROBE}.cli.parser") == "cli"
    assert probe.layer_of(PROBE) is None
    assert probe.unplaced() == [f"{PROBE}.stray"]


def test_the_check_reports_each_offence_of_the_source(probe: ServiceLayers):
    P = PROBE
    assert probe.source_offences() == [
        f"{P}.adapters.mail (adapters) imports {P}.services (services)",
        f"{P}.adapters.mail (adapters) imports {P}.services.orders (services)",
        f"{P}.cli.parser (cli) imports {P}.services (services)",
        f"{P}.cli.parser (cli) imports {P}.services.orders (services)",
        f"{P}.db.orders (db) imports {P}.schemas (schemas)",
        f"{P}.db.orders (db) imports {P}.schemas.views (schemas)",
        f"{P}.domain.money (domain) imports falcon",
        f"{P}.domain.rules (domain) imports {P}.db (db)",
        f"{P}.domain.rules (domain) imports {P}.db.base (db)",
        f"{P}.domain.rules (domain) reaches sqlalchemy through {P}.db.base",
        f"{P}.resources.orders (resources) imports {P}.db (db)",
        f"{P}.resources.orders (resources) imports {P}.db.base (db)",
        f"{P}.resources.orders (resources) imports sqlalchemy",
        f"{P}.schemas.bodies (schemas) imports psycopg",
        f"{P}.services.late (services) imports {P}.resources (resources)",
        f"{P}.services.late (services) imports {P}.resources.orders (resources)",
        f"{P}.services.late (services) reaches {P}.schemas (schemas)",
        f"{P}.services.late (services) reaches {P}.schemas.views (schemas)",
        f"{P}.services.late (services) reaches falcon through {P}.resources.orders",
        f"{P}.services.orders (services) reaches {P}.schemas (schemas)",  # through the adapter
        f"{P}.services.orders (services) reaches {P}.schemas.views (schemas)",
        f"{P}.services.people (services) imports gunicorn",
        f"{P}.settings (settings) imports sqlalchemy",
        f"{P}.workers.push (workers) imports {P}.db (db)",
        f"{P}.workers.push (workers) imports {P}.db.base (db)",
        f"{P}.workers.push (workers) imports {P}.workers.mail (workers)",
        f"{P}.workers.push (workers) reaches {P}.workers.mail.loop (workers)",
        f"{P}.wsgi (wsgi) imports {P}.resources (resources)",
        f"{P}.wsgi (wsgi) imports {P}.resources.orders (resources)",
    ]


def test_the_check_reports_what_a_layer_loads_in_a_fresh_interpreter(probe: ServiceLayers, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(probe.package.__file__ or "").parent.parent))
    P = PROBE
    assert probe.runtime_layers() == ["domain", "settings", "db", "schemas", "adapters", "services", "resources", "workers"]
    assert {layer: probe.runtime_offences(layer) for layer in probe.runtime_layers()} == {
        "domain": [f"{P}.domain.money loads falcon", f"{P}.domain.rules loads sqlalchemy",
                   f"{P}.domain.rules loads {P}.db (db)", f"{P}.domain.rules loads {P}.db.base (db)"],
        "settings": [f"{P}.settings loads sqlalchemy"],
        "db": [f"{P}.db.orders loads {P}.schemas (schemas)", f"{P}.db.orders loads {P}.schemas.views (schemas)"],
        "schemas": [f"{P}.schemas.bodies loads psycopg"],
        "adapters": [f"{P}.adapters.mail loads {P}.services (services)", f"{P}.adapters.mail loads {P}.services.orders (services)"],
        "services": [f"{P}.services.people loads gunicorn", f"{P}.services.orders loads {P}.schemas (schemas)",
                     f"{P}.services.orders loads {P}.schemas.views (schemas)"],  # the late import of a resource waits
        "resources": [],
        "workers": [],  # a worker importing another is seen in the source only
    }


def test_a_layer_checked_on_top_of_another_reports_what_it_does_alone(probe: ServiceLayers, monkeypatch):
    """One interpreter checks every layer, each on top of what its base loaded (``RUNTIME_BASE``);
    where the base loaded what the layer may not (the probe's domain loads falcon), the layer is
    checked alone: the answers are those of one fresh interpreter per layer."""
    monkeypatch.setenv("PYTHONPATH", str(Path(probe.package.__file__ or "").parent.parent))
    for layer in probe.runtime_layers():
        assert probe.runtime_offences(layer) == probe.runtime_offences_alone(layer), layer


def test_composition_builds_http_and_every_process(probe: ServiceLayers):
    assert probe.composition_offences() == [f"{PROBE}.composition defines no build_retention(settings)"]


def test_a_process_is_built_by_composition_and_checked_in_a_fresh_interpreter(probe: ServiceLayers):
    push, mail, _ = probe.processes
    assert probe.process_offences(push) == ["push worker: (built) loads falcon"]  # its build takes a resource
    assert probe.process_offences(mail) == []


def test_the_check_names_the_use_cases_that_reach_the_rendering(probe: ServiceLayers, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(probe.package.__file__ or "").parent.parent))
    P = PROBE
    assert probe.rendering_reached_by_use_cases() == [
        f"{P}.services.late reaches {P}.schemas", f"{P}.services.late reaches {P}.schemas.views",  # via a resource
        f"{P}.services.orders reaches {P}.schemas", f"{P}.services.orders reaches {P}.schemas.views",  # via an adapter
        f"importing services/ loads {P}.schemas", f"importing services/ loads {P}.schemas.views",
    ]


def test_the_check_finds_functions_by_name_outside_a_layer(probe: ServiceLayers):
    assert probe.functions_outside("schemas", "render_") == [f"{PROBE}.domain.values.render_total"]
