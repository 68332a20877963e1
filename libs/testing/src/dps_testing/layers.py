"""One plan for every service: the same layers, the same rules, no service's own exceptions.

A service's package holds these parts and no other module or folder of Python (its Alembic tree,
``migrations/``, aside), each a layer of the same name (``LAYERS``, the one table of rules):

- ``domain/``: pure rules and plain values; ``settings.py``; ``db/``: models, one store per aggregate;
- ``schemas/``: rendering answers and event data, parsing bodies;
- ``adapters/``: every client of another system (the api, the billing platform, webhook HTTP, the
  broker, mail, metrics exporters);
- ``services/``: the use cases; ``resources/``: HTTP (with the route table and what a resource
  receives); ``workers/``: one module (or folder) per process that serves no HTTP, its loop only;
- ``composition.py``: ``build_http(settings)`` and a ``build_<process>(settings)`` per other process;
- ``wsgi.py`` and ``cli.py`` (or ``cli/``): the entry points, which call only ``composition``.

A layer's modules import only the layers its row names (``uses``; its own too, but for a worker,
which never imports another worker), never reach those its row forbids even through another
module (``never_reaches``: a use case never reaches the rendering), and never load the frameworks
its row names (``never_loads``); nothing uses ``workers``, ``resources``, ``composition``, ``wsgi``
or ``cli`` but ``composition`` (and the entry points, ``composition``).

Two views are checked. The source view (``dps_testing.package_imports``): what each module imports
anywhere in its text, followed through the package. The runtime view: what importing a whole layer
pulls into a fresh interpreter, so that a framework arriving through another package (``dps_common``,
a third party) is seen too and modules imported by other tests hide nothing; and for each process
without HTTP, what running its command line module and its ``composition.build_<process>`` (without
running the process) loads, in a fresh interpreter of its own: never an HTTP framework.

A service's test module: ``class TestLayers(LayersSuite): layers = ServiceLayers(package, processes=...)``.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from functools import cached_property
from types import ModuleType
from typing import Any, ClassVar

from dps_testing.fresh_imports import (
    BEFORE,
    Branch,
    Steps,
    loaded_in_a_fresh_interpreter,
    loaded_in_branches,
    loaded_step_by_step,
)
from dps_testing.package_imports import PackageImports, in_part, top_level

__all__ = [  # the source and runtime views' helpers, used from here too
    "PackageImports", "in_part", "loaded_in_a_fresh_interpreter", "loaded_step_by_step", "top_level",
]

SQL = frozenset({"sqlalchemy", "psycopg"})
HTTP = frozenset({"falcon", "jinja2", "gunicorn"})
FRAMEWORKS = SQL | HTTP | {"alembic", "pydantic", "kombu", "requests", "prometheus_client", "stripe"}


@dataclass(frozen=True)
class Layer:
    """One row of the rules: a part of every service's package and what its modules may do."""

    name: str
    uses: frozenset[str]  # the layers its modules may import (besides their own)
    never_loads: frozenset[str] = frozenset()  # frameworks: not imported, nor by anything it reaches
    never_imports: frozenset[str] = frozenset()  # frameworks its own modules may not import
    never_reaches: frozenset[str] = frozenset()  # layers not reached even through another module
    apart: bool = False  # each module (or folder) of it stands alone: none imports another


def _uses(*names: str) -> frozenset[str]:
    return frozenset(names)


EVERY_LAYER = _uses("domain", "settings", "db", "schemas", "adapters", "services", "resources", "workers",
                    "composition", "wsgi", "cli")
LAYERS: tuple[Layer, ...] = (
    Layer("domain", _uses(), never_loads=FRAMEWORKS),
    Layer("settings", _uses(), never_loads=HTTP | SQL),
    Layer("db", _uses("domain", "settings"), never_loads=HTTP),
    Layer("schemas", _uses("domain"), never_loads=HTTP | SQL),
    Layer("adapters", _uses("domain", "schemas", "db", "settings"), never_loads=HTTP),
    Layer("services", _uses("domain", "db", "adapters", "settings"), never_loads=HTTP, never_reaches=_uses("schemas")),
    Layer("resources", _uses("services", "schemas", "domain", "settings"), never_imports=SQL),
    Layer("workers", _uses("services", "adapters", "domain", "settings"), never_loads=HTTP, apart=True),
    Layer("composition", EVERY_LAYER),
    Layer("wsgi", _uses("composition", "settings")),
    Layer("cli", _uses("composition", "settings")),
)
RULES = {layer.name: layer for layer in LAYERS}
assert set(RULES) == EVERY_LAYER


def reach(name: str) -> frozenset[str]:
    """The layers a layer's modules may load: those it uses, theirs in turn, less its ``never_reaches``."""
    found, todo = {name}, [name]
    while todo:
        for used in RULES[todo.pop()].uses - found:
            found.add(used)
            todo.append(used)
    return frozenset(found - RULES[name].never_reaches)


# The runtime view imports each layer on top of the one named here (None: a fresh interpreter), in one
# interpreter per service, a fork per layer: what a layer may use is imported once. The base is only
# trusted where it loaded nothing the layer may not (else the layer gets a fresh interpreter).
RUNTIME_BASE: dict[str, str | None] = {
    "domain": None, "settings": None, "db": "domain", "schemas": "domain", "adapters": "schemas",
    "services": "db", "resources": "services", "workers": "services",
}


@dataclass(frozen=True)
class Process:
    """A process that serves no HTTP: its console script runs the package's ``command`` module, which
    puts it together with ``composition.<build>(<settings>.from_env())``, ``settings`` naming the
    class (in the package) and ``env`` its configuration."""

    name: str
    build: str
    env: Mapping[str, str] = field(default_factory=dict)
    command: str = "cli"
    settings: str = "settings.Settings"


def http_loaded_by(name: str, entry_point: str, build: str = "", env: Mapping[str, str] | None = None) -> list[str]:
    """What importing ``entry_point`` and then running the statements ``build`` loads of an HTTP
    framework, in a fresh interpreter: ``"<name>: <step> loads falcon"``, one per framework."""
    steps = loaded_step_by_step([entry_point], build, env)
    return [f"{name}: {step} loads {framework}" for framework, step in first_to_load(steps, HTTP).items()]


def first_to_load(steps: Steps, wanted: Set[str]) -> dict[str, str]:
    """Each top-level package of ``wanted`` that the steps loaded, with the step that first did."""
    first: dict[str, str] = {}
    for step, loaded in steps:
        for name in sorted(top_level(loaded) & set(wanted)):
            first.setdefault(name, step)
    return first


@dataclass(frozen=True)
class ServiceLayers:
    """One service's package, cut into the layers by its folders and modules."""

    package: ModuleType
    processes: tuple[Process, ...] = ()

    @cached_property
    def imports(self) -> PackageImports:
        return PackageImports(self.package)

    def layer_of(self, module: str) -> str | None:
        """The layer of ``module`` (None: the package itself, or a module in no layer)."""
        part = module.removeprefix(self.package.__name__ + ".").partition(".")[0]
        return part if module != self.package.__name__ and part in RULES else None

    def _unit(self, module: str) -> str:
        """The part of an ``apart`` layer that holds ``module``: ``pkg.workers.push`` for ``pkg.workers.push.loop``."""
        return ".".join(module.split(".")[:3])

    def modules_in(self, layer: str) -> list[str]:
        return sorted(m for m in self.imports.modules if self.layer_of(m) == layer)

    def unplaced(self) -> list[str]:
        """The package's modules that sit in no layer."""
        package = self.package.__name__
        return sorted(m for m in self.imports.modules if m != package and self.layer_of(m) is None)

    def _may_not(self, module: str, other: str, allowed: frozenset[str]) -> bool:
        layer, of = self.layer_of(module), self.layer_of(other)
        if of is None or in_part(module, other):  # the package itself, or a package ``module`` is in
            return False
        if of == layer:
            return RULES[layer].apart and self._unit(module) != self._unit(other)
        return of not in allowed

    def source_offences(self) -> list[str]:
        """Every module whose source (followed through the package) breaks its layer's rules."""
        imports, offences = self.imports, []
        for module in sorted(imports.modules):
            layer = self.layer_of(module)
            if layer is None:
                continue
            rule, direct, reached = RULES[layer], imports.direct_imports(module), imports.reached(module)
            ours = imports.ours(direct)
            offences += [f"{module} ({layer}) imports {m} ({self.layer_of(m)})" for m in sorted(ours)
                         if self._may_not(module, m, rule.uses)]
            offences += [f"{module} ({layer}) reaches {m} ({self.layer_of(m)})" for m in sorted(reached - ours)
                         if self._may_not(module, m, reach(layer))]
            forbidden = rule.never_loads | rule.never_imports
            offences += [f"{module} ({layer}) imports {name}" for name in sorted(top_level(direct) & forbidden)]
            for name in sorted(rule.never_loads - top_level(direct)):
                through = sorted(m for m in reached if imports.frameworks_imported({m}, {name}))
                offences += [f"{module} ({layer}) reaches {name} through {through[0]}"] if through else []
        return offences

    def composition_offences(self) -> list[str]:
        """``composition`` defines ``build_http`` (where there are resources) and each process's ``build``."""
        name = f"{self.package.__name__}.composition"
        if name not in self.imports.modules:
            return [f"{name}: no such module"]
        tree = ast.parse(self.imports.modules[name].read_text())
        defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        wanted = (["build_http"] if self.modules_in("resources") else []) + [p.build for p in self.processes]
        return [f"{name} defines no {build}(settings)" for build in wanted if build not in defined]

    def process_offences(self, process: Process) -> list[str]:
        package = self.package.__name__
        module, _, settings = process.settings.rpartition(".")
        build = (f"from {package}.{module} import {settings}\n"
                 f"from {package}.composition import {process.build}\n"
                 f"{process.build}({settings}.from_env())")
        return http_loaded_by(process.name, f"{package}.{process.command}", build, process.env)

    def rendering_reached_by_use_cases(self) -> list[str]:
        """Each module of ``services/`` that reaches ``schemas/`` (directly or through another module
        of the package, an adapter included), and each ``schemas/`` module importing them all loads."""
        use_cases = self.modules_in("services")
        reached = [f"{m} reaches {r}" for m in use_cases for r in sorted(self.imports.reached(m))
                   if self.layer_of(r) == "schemas"]
        loaded = loaded_in_a_fresh_interpreter(*use_cases) if use_cases else frozenset()
        return reached + [f"importing services/ loads {m}" for m in sorted(loaded) if self.layer_of(m) == "schemas"]

    def functions_outside(self, layer: str, prefix: str) -> list[str]:
        """Every function named ``prefix...`` defined by a module outside ``layer``: ``module.name``."""
        return [f"{m}.{node.name}" for m, path in sorted(self.imports.modules.items()) if self.layer_of(m) != layer
                for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.FunctionDef) and node.name.startswith(prefix)]

    def runtime_layers(self) -> list[str]:
        return [layer for layer in RUNTIME_BASE if self.modules_in(layer)]

    def runtime_offences(self, layer: str) -> list[str]:
        """What importing every module of ``layer``, one after another in a fresh interpreter, loads
        that the layer may not: on top of its ``RUNTIME_BASE`` where that base loaded nothing the layer
        may not, else in an interpreter of its own."""
        branched = self._branched.get(layer)
        offences = self._offences(layer, branched) if branched else []
        if not branched or any(offence.startswith(BEFORE) for offence in offences):
            offences = self.runtime_offences_alone(layer)
        return offences

    def runtime_offences_alone(self, layer: str) -> list[str]:
        """``runtime_offences`` in a fresh interpreter for ``layer`` alone."""
        return self._offences(layer, loaded_step_by_step(self.modules_in(layer)))

    @cached_property
    def _branched(self) -> dict[str, Steps]:
        """Every layer's steps, from one interpreter (``RUNTIME_BASE`` as a tree of forks)."""

        def branch(layer: str) -> Branch:
            then = tuple(branch(upper) for upper, base in RUNTIME_BASE.items() if base == layer)
            return Branch(layer, tuple(self.modules_in(layer)), then)

        return loaded_in_branches([branch(layer) for layer, base in RUNTIME_BASE.items() if base is None])

    def _offences(self, layer: str, steps: Steps) -> list[str]:
        package, allowed = self.package.__name__, reach(layer)
        offences = [f"{step} loads {name}" for name, step in first_to_load(steps, RULES[layer].never_loads).items()]
        seen: set[str] = set()
        for step, loaded in steps:
            ours = sorted(m for m in loaded - seen if in_part(m, package))
            offences += [f"{step} loads {m} ({of})" for m in ours if (of := self.layer_of(m)) and of not in allowed]
            seen |= loaded
        return offences


class LayersSuite:
    """The layers tests, the same for every service: ``class TestLayers(LayersSuite): layers = ...``."""

    layers: ClassVar[ServiceLayers]

    def pytest_generate_tests(self, metafunc: Any) -> None:
        if "layer" in metafunc.fixturenames:
            metafunc.parametrize("layer", self.layers.runtime_layers())
        if "process" in metafunc.fixturenames:
            metafunc.parametrize("process", self.layers.processes, ids=[p.name for p in self.layers.processes])

    def test_every_module_sits_in_a_layer(self) -> None:
        _none(self.layers.unplaced())

    def test_the_source_keeps_to_the_layers(self) -> None:
        _none(self.layers.source_offences())

    def test_importing_a_layer_loads_only_what_it_may(self, layer: str) -> None:
        _none(self.layers.runtime_offences(layer))

    def test_composition_builds_http_and_every_process(self) -> None:
        _none(self.layers.composition_offences())

    def test_a_process_without_http_loads_no_http_framework(self, process: Process) -> None:
        _none(self.layers.process_offences(process))

    def test_no_use_case_reaches_the_rendering(self) -> None:
        """The table's ``never_reaches`` for ``services/``, checked by name: the use cases return views
        and never reach ``schemas/``, not even through an adapter (the outbox adapter is handed to them)."""
        _none(self.layers.rendering_reached_by_use_cases())


def _none(offences: list[str]) -> None:
    """This module is no test module (pytest does not rewrite its asserts): the offences, one a line."""
    assert not offences, "\n".join(["", *offences])
