"""The source view of ``dps_testing.layers``: what each module of a package imports anywhere in its text
(an import inside a function or under ``TYPE_CHECKING`` counts: it names a module it depends on),
and what importing it may load of the package, followed through the package."""

from __future__ import annotations

import ast
from collections.abc import Set
from functools import cached_property
from pathlib import Path
from types import ModuleType


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

    def ours(self, modules: Set[str]) -> set[str]:
        """The package's modules among ``modules``, with the packages that importing them runs first."""
        return {m for name in modules for m in with_parents(name) if m in self.modules}

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
                todo.extend(self.ours(self.direct_imports(current)))
            self._reached[module] = frozenset(seen)
        return self._reached[module]

    def modules_of(self, *parts: str) -> list[str]:
        return sorted(m for m in self.modules if any(in_part(m, part) for part in parts))

    def frameworks_imported(self, modules: Set[str], frameworks: Set[str]) -> set[str]:
        return top_level(set().union(*(self.direct_imports(m) for m in modules))) & set(frameworks)


def with_parents(module: str) -> set[str]:
    """Importing ``a.b.c`` runs ``a`` and ``a.b`` first."""
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def in_part(module: str, part: str) -> bool:
    return module == part or module.startswith(part + ".")


def top_level(modules: Set[str]) -> set[str]:
    return {m.partition(".")[0] for m in modules}
