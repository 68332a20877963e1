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
    PackageImports,
    Process,
    ServiceLayers,
    first_to_load,
    in_part,
    loaded_in_a_fresh_interpreter,
    loaded_step_by_step,
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

RELAY = Process(
    "outbox relay",
    "dps_common.outbox.relay.cli",
    "from dps_common.db import Transactions, make_engine\n"
    "from dps_common.outbox.relay.relay import OutboxRelay\n"
    "from dps_common.outbox.relay.settings import RelaySettings\n"
    "settings = RelaySettings.from_env()\n"
    "OutboxRelay(settings, Transactions.for_engine(make_engine(settings.database_url, pool_size=1)))",
    {"DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/dps_relay_layers"},
)


def test_modules_for_processes_without_http_load_no_http_framework():
    assert first_to_load(loaded_step_by_step(NO_HTTP_MODULES), HTTP) == {}


def test_the_outbox_relay_loads_no_http_framework():
    assert RELAY.offences() == []


def test_auth_never_imports_http():
    modules = loaded_in_a_fresh_interpreter(
        "dps_common.auth.authenticator", "dps_common.auth.introspection", "dps_common.auth.scopes"
    )
    assert not {m for m in modules if in_part(m, "dps_common.http")}


# --- the check itself -----------------------------------------------------------------------------

PROBE = "layers_probe"
PROBE_FILES = {
    "__init__.py": "",
    "settings.py": "",
    "domain/__init__.py": "",
    "domain/money.py": "import falcon\n",  # a framework in the domain
    "domain/rules.py": "from ..db import base\n",  # the domain reaching up
    "db/__init__.py": "",
    "db/base.py": "import sqlalchemy\n",
    "schemas/__init__.py": "",
    "schemas/views.py": "from layers_probe.domain import rules\n",
    "services/__init__.py": "",
    "services/orders.py": "def later():\n    from layers_probe import app\n",  # a use case reaching an entry point
    "resources/__init__.py": "",
    "resources/orders.py": "from sqlalchemy import select\nfrom layers_probe.db import base\n",
    "app.py": "import falcon\n",
    "cli.py": "from layers_probe.worker import build\n",
    "worker.py": "def build():\n    from layers_probe import app\n",  # loads falcon only when built
    "stray.py": "",
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> ServiceLayers:
    root = tmp_path_factory.mktemp("probe")
    for name, text in PROBE_FILES.items():
        path = root / PROBE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    sys.path.insert(0, str(root))
    try:
        package = __import__(PROBE)
    finally:
        sys.path.remove(str(root))
    built = Process("probe worker", f"{PROBE}.cli", f"from {PROBE}.worker import build\nbuild()", {"PYTHONPATH": str(root)})
    return ServiceLayers(package, entry_points=("app", "cli", "worker"), processes=(built,))


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


def test_the_check_places_every_module(probe: ServiceLayers):
    assert probe.layer_of(f"{PROBE}.domain.money") == "domain"
    assert probe.layer_of(f"{PROBE}.worker") == "entry points"
    assert probe.unplaced() == [f"{PROBE}.stray"]


def test_the_check_reports_each_offence_of_the_source(probe: ServiceLayers):
    assert set(probe.source_offences()) == {
        f"{PROBE}.domain.money (domain) imports falcon",
        f"{PROBE}.domain.rules (domain) reaches {PROBE}.db (db)",
        f"{PROBE}.domain.rules (domain) reaches {PROBE}.db.base (db)",
        f"{PROBE}.domain.rules (domain) imports sqlalchemy",
        f"{PROBE}.schemas.views (schemas) reaches {PROBE}.db (db)",
        f"{PROBE}.schemas.views (schemas) reaches {PROBE}.db.base (db)",
        f"{PROBE}.schemas.views (schemas) imports sqlalchemy",
        f"{PROBE}.services.orders (services) reaches {PROBE}.app (entry points)",
        f"{PROBE}.services.orders (services) imports falcon",
        f"{PROBE}.resources.orders (resources) imports sqlalchemy",
        f"{PROBE}.resources.orders (resources) imports {PROBE}.db",
        f"{PROBE}.resources.orders (resources) imports {PROBE}.db.base",
        f"probe worker: {PROBE}.cli reaches a module importing falcon",
    }


def test_the_check_reports_what_a_layer_loads_in_a_fresh_interpreter(probe: ServiceLayers, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(Path(probe.package.__file__ or "").parent.parent))
    assert probe.runtime_layers() == ["domain", "settings", "db", "schemas", "services"]
    assert set(probe.runtime_offences("domain")) == {
        f"{PROBE}.domain.money loads falcon",
        f"{PROBE}.domain.rules loads sqlalchemy",
        f"{PROBE}.domain.rules loads {PROBE}.db (db)",
        f"{PROBE}.domain.rules loads {PROBE}.db.base (db)",
    }
    assert probe.runtime_offences("services") == []  # its import of the app waits in a function


def test_a_layer_checked_on_top_of_another_reports_what_it_does_alone(probe: ServiceLayers, monkeypatch):
    """One interpreter checks every layer, each on top of what its base loaded (``RUNTIME_BASE``);
    where the base loaded what the layer may not (the probe's domain loads falcon), the layer is
    checked alone: the answers are those of one fresh interpreter per layer."""
    monkeypatch.setenv("PYTHONPATH", str(Path(probe.package.__file__ or "").parent.parent))
    for layer in probe.runtime_layers():
        assert probe.runtime_offences(layer) == probe.runtime_offences_alone(layer), layer


def test_the_check_reports_a_process_loading_falcon_once_built(probe: ServiceLayers):
    (worker,) = probe.processes
    assert worker.offences() == ["probe worker: (built) loads falcon"]
