"""The layers check as it was before the one plan (issue 26), with each service's own ``entry_points``
and ``support`` lists: kept only for the services whose folders are not moved yet (their
``tests/unit/test_*layers*.py`` import it), and deleted with the last of them. ``dps_testing.layers``
holds the one plan's rules.

What a package's modules may import, and which processes may load an HTTP framework.

A service's package is cut into the same layers everywhere, named by its folders: ``domain`` (stands on
nothing of the package and on no framework), ``settings`` (nothing of the package), ``db`` (the
domain), ``schemas`` (the domain; no SQL), ``services``, the use cases (the layers below and the
package's ``support`` modules; no HTTP framework), ``resources`` (HTTP; no SQL, no ``db`` module
imported directly), and the ``entry_points`` each service names (composition roots, routes, the
command line, worker loops). ``support`` are the modules a service names beside the layers (clients
of other systems, the parts of a worker): like the use cases, they never reach an entry point or a
resource and load no HTTP framework. Every module sits in exactly one layer.

Two views are checked. The source view (``PackageImports``): what each module imports anywhere in
its text (an import inside a function or under ``TYPE_CHECKING`` counts: it names the module it
depends on), followed through the package. The runtime view: what importing a whole layer pulls into
one fresh interpreter, so that a framework arriving through another package (``dps_common``, a third
party) is seen too and modules imported by other tests cannot hide anything; and for each process
without HTTP (a worker, a relay, a consumer, a command line), what importing its entry point and
putting the process together (``Process.build``, without running it) loads, in a fresh interpreter
of its own: never ``falcon``.

A service's test module subclasses ``LayersSuite`` with its ``ServiceLayers``; the checks are the
suite's, the same for all.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
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

__all__ = ["loaded_in_a_fresh_interpreter", "loaded_step_by_step"]  # the runtime view's, used from here too

SQL = frozenset({"sqlalchemy", "psycopg"})
HTTP = frozenset({"falcon", "jinja2", "gunicorn"})
FRAMEWORKS = SQL | HTTP | {"alembic", "pydantic", "kombu", "requests", "prometheus_client", "stripe"}


class PackageImports:
    """The import graph of one package (its Alembic tree aside: Alembic loads it, nothing imports it)."""

    def __init__(self, package: ModuleType, skip: tuple[str, ...] = ("migrations",)):
        assert package.__file__ is not None
        self.package = package.__name__
        self._root = Path(package.__file__).parent
        self._skip = skip
        self._direct: dict[str, frozenset[str]] = {}
        self._reached: dict[str, frozenset[str]] = {}

    @cached_property
    def modules(self) -> dict[str, Path]:
        found = {}
        for path in self._root.rglob("*.py"):
            parts = path.relative_to(self._root).with_suffix("").parts
            if parts[0] in self._skip:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((self.package, *parts))] = path
        return found

    def _package_of(self, module: str) -> str:
        return module if self.modules[module].name == "__init__.py" else module.rpartition(".")[0]

    def direct_imports(self, module: str) -> frozenset[str]:
        """The modules (of any package) that ``module``'s source imports, wherever in it."""
        if module not in self._direct:
            path = self.modules[module]
            imported: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, ast.Import):
                    imported.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        anchor = self._package_of(module).split(".")
                        anchor = anchor[: len(anchor) - node.level + 1]
                        base = ".".join([*anchor, base] if base else anchor)
                    imported.add(base)
                    # ``from pkg.services import catalog`` imports the module ``pkg.services.catalog``
                    imported.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in self.modules)
            self._direct[module] = frozenset(imported)
        return self._direct[module]

    def reached(self, module: str) -> frozenset[str]:
        """The package's modules that importing ``module`` (and calling into it) may load, itself included."""
        if module not in self._reached:
            seen: set[str] = set()
            todo = [module]
            while todo:
                current = todo.pop()
                if current in seen:
                    continue
                seen.add(current)
                for name in self.direct_imports(current):
                    todo.extend(m for m in _with_parents(name) if m in self.modules)
            self._reached[module] = frozenset(seen)
        return self._reached[module]

    def modules_of(self, *parts: str) -> list[str]:
        return sorted(m for m in self.modules if any(in_part(m, part) for part in parts))

    def outside(self, modules: Set[str], *allowed: str) -> set[str]:
        """The package's modules in ``modules`` that are not within one of the ``allowed`` parts."""
        return {
            m for m in modules
            if in_part(m, self.package) and m != self.package and not any(in_part(m, p) for p in allowed)
        }

    def frameworks_imported(self, modules: Set[str], frameworks: Set[str]) -> set[str]:
        return top_level(set().union(*(self.direct_imports(m) for m in modules))) & set(frameworks)


def _with_parents(module: str) -> set[str]:
    """Importing ``a.b.c`` runs ``a`` and ``a.b`` first."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def in_part(module: str, part: str) -> bool:
    return module == part or module.startswith(part + ".")


def top_level(modules: Set[str]) -> set[str]:
    return {m.partition(".")[0] for m in modules}




# --- the runtime view ---------------------------------------------------------------------------------


def first_to_load(steps: Steps, wanted: Set[str]) -> dict[str, str]:
    """Each top-level package of ``wanted`` that the steps loaded, with the step that first did."""
    first: dict[str, str] = {}
    for step, loaded in steps:
        for name in sorted(top_level(loaded) & set(wanted)):
            first.setdefault(name, step)
    return first


# --- the rules ----------------------------------------------------------------------------------------

LAYERS = ("domain", "settings", "db", "schemas", "services", "resources")
SUPPORT, ENTRY_POINTS = "support", "entry points"
# what each layer's modules may reach of their own package (the layers not named here may reach anything)
MAY_USE: dict[str, frozenset[str]] = {
    "domain": frozenset({"domain"}),
    "settings": frozenset({"settings"}),
    "db": frozenset({"db", "domain"}),
    "schemas": frozenset({"schemas", "domain"}),
    "services": frozenset({"services", SUPPORT, "schemas", "db", "domain", "settings"}),
    SUPPORT: frozenset({SUPPORT, "services", "schemas", "db", "domain", "settings"}),
}
# what each layer's modules may not import (source view) nor load (runtime view)
MAY_NOT_LOAD: dict[str, frozenset[str]] = {
    "domain": FRAMEWORKS,
    "settings": HTTP | SQL,
    "schemas": SQL,
    "services": HTTP,
    SUPPORT: HTTP,
}
# The runtime view imports each layer on top of the one named here (None: a fresh interpreter), in one
# interpreter per service, a fork per layer: what a layer may use is imported once. The base is only
# trusted where it holds nothing the layer may not load (else the layer gets a fresh interpreter).
RUNTIME_BASE: dict[str, str | None] = {
    "settings": None,
    "domain": None,
    "db": "domain",
    "schemas": "domain",
    "services": "schemas",
    SUPPORT: "services",
}


@dataclass(frozen=True)
class Process:
    """A process that serves no HTTP: the module its console script runs and, in ``build``, the
    statements that put it together as that script does, without running it (``env`` is its
    configuration)."""

    name: str
    entry_point: str
    build: str = ""
    env: Mapping[str, str] = field(default_factory=dict)

    def offences(self) -> list[str]:
        steps = loaded_step_by_step([self.entry_point], self.build, self.env)
        return [f"{self.name}: {step} loads {name}" for name, step in first_to_load(steps, HTTP).items()]


@dataclass(frozen=True)
class ServiceLayers:
    """One service's package cut into the layers (module names are relative to the package)."""

    package: ModuleType
    entry_points: tuple[str, ...]
    support: tuple[str, ...] = ()
    processes: tuple[Process, ...] = ()

    @cached_property
    def imports(self) -> PackageImports:
        return PackageImports(self.package)

    @cached_property
    def parts(self) -> dict[str, str]:
        """Each part of the package (a module or a folder) with its layer."""
        name = self.package.__name__
        found = {f"{name}.{layer}": layer for layer in LAYERS if f"{name}.{layer}" in self.imports.modules}
        found |= {f"{name}.{part}": SUPPORT for part in self.support}
        found |= {f"{name}.{part}": ENTRY_POINTS for part in self.entry_points}
        return found

    def layer_of(self, module: str) -> str | None:
        """The layer of the most specific part holding ``module`` (None: the package itself, or none)."""
        holding = [part for part in self.parts if in_part(module, part)]
        return self.parts[max(holding, key=len)] if holding else None

    def modules_in(self, layer: str) -> list[str]:
        return sorted(m for m in self.imports.modules if self.layer_of(m) == layer)

    def unplaced(self) -> list[str]:
        """Modules in no layer, and named parts that hold no module."""
        package = self.package.__name__
        loose = [m for m in self.imports.modules if m != package and self.layer_of(m) is None]
        empty = [p for p in self.parts if not any(in_part(m, p) for m in self.imports.modules)]
        return sorted(loose) + [f"{part} (named, but no such module)" for part in sorted(empty)]

    def _ours_outside(self, modules: Set[str], layer: str) -> list[str]:
        allowed = MAY_USE.get(layer)
        if allowed is None:
            return []
        return sorted(m for m in modules if (of := self.layer_of(m)) is not None and of not in allowed)

    def source_offences(self) -> list[str]:
        """Every module whose source (followed through the package) breaks its layer's rules."""
        imports, offences = self.imports, []
        for module in sorted(imports.modules):
            layer = self.layer_of(module)
            if layer is None:
                continue
            reached = imports.reached(module)
            offences += [f"{module} ({layer}) reaches {m} ({self.layer_of(m)})"
                         for m in self._ours_outside(reached, layer)]
            frameworks = imports.frameworks_imported(reached, MAY_NOT_LOAD.get(layer, frozenset()))
            offences += [f"{module} ({layer}) imports {name}" for name in sorted(frameworks)]
            if layer == "resources":
                direct = imports.direct_imports(module)
                offences += [f"{module} (resources) imports {name}" for name in sorted(top_level(direct) & SQL)]
                offences += [f"{module} (resources) imports {m}" for m in sorted(direct)
                             if m in imports.modules and self.layer_of(m) == "db"]
        for process in self.processes:
            if process.entry_point in imports.modules:
                reached = imports.reached(process.entry_point)
                offences += [f"{process.name}: {process.entry_point} reaches a module importing {name}"
                             for name in sorted(imports.frameworks_imported(reached, HTTP))]
        return offences

    def runtime_layers(self) -> list[str]:
        return [layer for layer in MAY_USE if self.modules_in(layer)]

    def runtime_offences(self, layer: str) -> list[str]:
        """What importing every module of ``layer``, one after another in a fresh interpreter, loads
        that the layer may not: on top of its ``RUNTIME_BASE`` where that base holds nothing the layer
        may not load, else in an interpreter of its own."""
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
        package = self.package.__name__
        offences = [f"{step} loads {name}" for name, step in first_to_load(steps, MAY_NOT_LOAD.get(layer, set())).items()]
        seen: set[str] = set()
        for step, loaded in steps:
            ours = {m for m in loaded - seen if in_part(m, package)}
            offences += [f"{step} loads {m} ({self.layer_of(m)})" for m in self._ours_outside(ours, layer)]
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

    def test_every_module_sits_in_one_layer(self) -> None:
        _none(self.layers.unplaced())

    def test_the_source_keeps_to_the_layers(self) -> None:
        _none(self.layers.source_offences())

    def test_importing_a_layer_loads_only_what_it_may(self, layer: str) -> None:
        _none(self.layers.runtime_offences(layer))

    def test_a_process_without_http_loads_no_http_framework(self, process: Process) -> None:
        _none(process.offences())


def _none(offences: list[str]) -> None:
    """This module is no test module (pytest does not rewrite its asserts): the offences, one a line."""
    assert not offences, "\n".join(["", *offences])
