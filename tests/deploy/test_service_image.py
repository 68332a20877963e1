"""deploy/service.Dockerfile, the one image template for the four services: compose builds each service
with it and that service's folder and package; every ARG is declared in each stage that uses it (an ARG
is scoped to its stage); the image names its app to gunicorn through ``DPS_WSGI_APP`` (gunicorn's
``wsgi_app``, read by dps_common.gunicorn_conf) so its CMD stays exec-form; and its .dockerignore
sends what the template copies for every service, no tests and no test support. No Docker engine runs
here: the files are read."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from deploy_helpers import ROOT, compose, load_module

TEMPLATE = ROOT / "deploy" / "service.Dockerfile"
IGNORE = ROOT / "deploy" / "service.Dockerfile.dockerignore"
SERVICE_FOLDERS = sorted(path.parent.name for path in ROOT.glob("services/*/pyproject.toml"))
# compose's name for each image -> the build it uses (the anchors resolved), the stand-in's left out
BUILDS = {service["image"]: service["build"] for service in compose()["services"].values()
          if service.get("build", {}).get("dockerfile") == "deploy/service.Dockerfile"}


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    lines = [line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in joined.splitlines() if line.strip()]


def stages() -> list[list[tuple[str, str]]]:
    found: list[list[tuple[str, str]]] = []
    for instruction in instructions(TEMPLATE):
        if instruction[0] == "FROM":
            found.append([])
        found[-1].append(instruction)
    return found


def test_compose_builds_every_service_from_the_template_with_its_folder_and_package():
    assert sorted(build["args"]["SERVICE"] for build in BUILDS.values()) == SERVICE_FOLDERS
    for image, build in BUILDS.items():
        service, package = build["args"]["SERVICE"], build["args"]["PACKAGE"]
        assert build["context"] == "." and set(build["args"]) == {"SERVICE", "PACKAGE"}, image
        assert image == f"dps-{service}:dev"  # the names deploy/k8s pulls
        wsgi = ROOT / "services" / service / "src" / package / "wsgi.py"
        assert re.search(r"^def create\(", wsgi.read_text(), re.MULTILINE), f"{image}: no {package}.wsgi:create"


def test_every_arg_is_declared_in_each_stage_that_uses_it():
    base_environment = {"PATH"}
    for stage in stages():
        declared = {arguments.split("=")[0] for name, arguments in stage if name == "ARG"}
        used = set()
        for name, arguments in stage:
            if name in ("RUN", "COPY", "ENV", "WORKDIR", "CMD"):
                used |= set(re.findall(r"\$\{?(\w+)", arguments))
        assert used <= declared | base_environment, f"stage {stage[0][1]}: {sorted(used - declared - base_environment)}"
    [build, final] = stages()
    assert {arguments for name, arguments in build if name == "ARG"} == {"SERVICE", "PACKAGE"}
    assert not any("=" in arguments for stage in stages() for name, arguments in stage if name == "ARG"), \
        "no default: a build without the service's arguments must fail"


def test_the_image_names_its_app_in_the_environment_and_runs_gunicorn_in_exec_form(monkeypatch):
    [build, final] = stages()
    [cmd] = [arguments for name, arguments in final if name == "CMD"]
    assert json.loads(cmd) == ["gunicorn", "-c", "python:dps_common.gunicorn_conf"]  # no shell: gunicorn gets the signals
    environment = " ".join(arguments for name, arguments in final if name == "ENV")
    assert 'DPS_WSGI_APP="${PACKAGE}.wsgi:create()"' in environment.split()
    assert ("USER", "10001:10001") in final
    monkeypatch.setenv("DPS_WSGI_APP", "dps_api.wsgi:create()")  # what gunicorn's settings take from it
    conf = load_module(ROOT / "libs" / "common" / "src" / "dps_common" / "gunicorn_conf.py")
    assert conf.wsgi_app == "dps_api.wsgi:create()"
    monkeypatch.delenv("DPS_WSGI_APP")
    assert load_module(ROOT / "libs" / "common" / "src" / "dps_common" / "gunicorn_conf.py").wsgi_app is None


@pytest.mark.parametrize("service", SERVICE_FOLDERS)
def test_the_context_holds_what_the_template_copies_and_no_tests(service):
    rules = [line for line in IGNORE.read_text().splitlines() if line and not line.startswith("#")]
    assert rules[0] == "*"  # everything out, then back in what the template copies
    [build, _] = stages()
    copied = [arguments.split()[0].replace("${SERVICE}", service) for name, arguments in build
              if name == "COPY" and not arguments.startswith("--from")]
    assert copied == ["constraints.txt", "libs/common", f"services/{service}"]
    assert all(f"!{source}" in rules for source in copied), (service, rules)
    assert {"libs/common/tests", "services/*/tests", "**/__pycache__"} <= set(rules)
    assert not any("testing" in rule for rule in rules if rule.startswith("!"))
