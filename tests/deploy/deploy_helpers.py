"""What the deployment tests share: the repository's paths, the compose file, the two routers (the
Kubernetes ingress and the compose proxy) as path -> owner functions, every route the services
register, and kustomize rendering."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

from dps_testing.availability import unavailable

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
COMPOSE_FILE = ROOT / "docker-compose.yml"
PROXY_CONF = ROOT / "deploy" / "compose" / "proxy" / "default.conf"

# which service owns which source tree's routes, by its name in each router
OWNERS = {
    "api": ("services/api/src/dps_api", "dps-api", "api"),
    "webhooks": ("services/webhook-dispatcher/src/dps_webhooks", "dps-webhook-dispatcher", "webhooks"),
    "billing": ("services/billing-connector/src/dps_billing", "dps-billing-connector", "billing"),
}


def load_module(path: Path) -> ModuleType:
    """A script of deploy/ (not a package) imported by path."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE_FILE.read_text())


CONSOLE_SOURCE = "services/console/src/dps_console"


def console_routes() -> list[str]:
    """Every page the console registers (``app.add_route(ROOT + "/path", ...)`` under ``/console``),
    with its ``{parameters}`` filled in."""
    routes = []
    for path in sorted((ROOT / CONSOLE_SOURCE).rglob("*.py")):
        text = path.read_text()
        for route in re.findall(r'add_route\(\s*ROOT(?:\s*\+\s*"(/[^"]*)")?\s*[,)]', text):
            routes.append("/console" + re.sub(r"\{[^}]+\}", "0193e6b2-7c1a-7def-8000-000000000001", route))
        for base, route in re.findall(r'add_route\(\s*(\w+)\s*(?:\+\s*"(/[^"]*)")?\s*,', text):
            prefix = re.search(rf'^\s*{base}\s*=\s*ROOT\s*\+\s*"(/[^"]*)"', text, re.MULTILINE)
            if prefix:
                concrete = re.sub(r"\{[^}]+\}", "0193e6b2-7c1a-7def-8000-000000000001", prefix.group(1) + route)
                routes.append("/console" + concrete)
        for _ in re.findall(r'add_static_route\(\s*ROOT\s*\+\s*"/static"', text):
            routes.append("/console/static/console.css")
    return routes


def service_routes() -> dict[str, list[str]]:
    """Every public route each service registers (``api.add("/path", ...)``), with its
    ``{parameters}`` filled in: the paths the routers must send to it."""
    routes: dict[str, list[str]] = {}
    for owner, (source, _, _) in OWNERS.items():
        for path in sorted((ROOT / source).rglob("*.py")):
            for route in re.findall(r'api\.add\(\s*"(/[^"]*)"', path.read_text()):
                concrete = re.sub(r"\{[^}]+\}", "0193e6b2-7c1a-7def-8000-000000000001", route)
                routes.setdefault(owner, []).append("/external/v1" + concrete)
    return routes


Router = Callable[[str], str | None]


def ingress_router(ingress: dict[str, Any]) -> Router:
    """ingress-nginx with use-regex: each path a case-insensitive regex anchored at the start, the
    longest path tried first; the backend Service's name, or None."""
    paths = [(p["path"], p["backend"]["service"]["name"]) for rule in ingress["spec"]["rules"]
             for p in rule["http"]["paths"]]
    paths.sort(key=lambda pair: len(pair[0]), reverse=True)

    def route(path: str) -> str | None:
        for pattern, service in paths:
            if re.match(pattern, path, re.IGNORECASE):
                return service
        return None

    return route


def proxy_router(conf: str) -> Router:
    """nginx location matching for the compose proxy's API server: exact (=) first, then regex
    locations (~) in order, then the longest prefix; the upstream's service name, or None."""
    server = conf.split("server {")[1]
    upstreams = dict(re.findall(r"set \$(\w+) http://([\w-]+):\d+;", server))
    exact, regex, prefix = {}, [], []
    for modifier, pattern, body in re.findall(r"location\s+(=|~)?\s*(\S+)\s*\{([^}]*)\}", server):
        target = re.search(r"proxy_pass \$(\w+);", body)
        owner = upstreams[target.group(1)] if target else None
        if modifier == "=":
            exact[pattern] = owner
        elif modifier == "~":
            regex.append((pattern, owner))
        else:
            prefix.append((pattern, owner))

    def route(path: str) -> str | None:
        if path in exact:
            return exact[path]
        for pattern, owner in regex:
            if re.search(pattern, path):
                return owner
        matches = [(p, o) for p, o in prefix if path.startswith(p)]
        return max(matches, key=lambda m: len(m[0]))[1] if matches else None

    return route


def kustomize_command() -> list[str]:
    """A real kustomize: the standalone binary, or kubectl's built-in one (v5 here)."""
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    unavailable("neither kustomize nor kubectl is installed: the overlays cannot be rendered")


def render(overlay: Path) -> list[dict[str, Any]]:
    done = subprocess.run([*kustomize_command(), str(overlay)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"kustomize failed on {overlay}:\n{done.stderr}"
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def dev_tree(tmp: Path) -> Path:
    """A copy of deploy/k8s with the dev overlay's secrets made by its own script (as
    `make k8s-dev-secrets` makes them), so that the dev overlay renders as a developer renders it."""
    tree = tmp / "k8s"
    shutil.copytree(K8S, tree, ignore=shutil.ignore_patterns("*.env", "__pycache__"))
    script = load_module(tree / "overlays" / "dev" / "make_secrets.py")
    urls = {
        "API_DATABASE_URL": "postgresql://dps_api:pw@10.20.0.10:5432/dps_api",
        "WEBHOOKS_DATABASE_URL": "postgresql://dps_webhooks:pw@10.20.0.10:5432/dps_webhooks",
        "BILLING_DATABASE_URL": "postgresql://dps_billing:pw@10.20.0.10:5432/dps_billing",
        "CONSOLE_DATABASE_URL": "postgresql://dps_console:pw@10.20.0.10:5432/dps_console",
        "SMTP_URL": "smtp://10.20.0.40:587",
        "AMQP_URL": "amqp://dps:pw@10.20.0.20:5672/dps", "REDIS_URL": "redis://:pw@10.20.0.30:6379/0",
    }
    for name, content in script.files(urls).items():
        out = tree / "overlays" / "dev" / "secrets"
        out.mkdir(exist_ok=True)
        (out / name).write_text("".join(f"{k}={v}\n" for k, v in content.items()))
    return tree / "overlays" / "dev"


# -- rendered manifests: lookups shared by the Kubernetes tests -----------------------------------


def of_kind(docs, kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}


def selects(policy: dict[str, Any], labels: dict[str, str]) -> bool:
    selector = policy["spec"]["podSelector"]
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] == "In"
        if labels.get(expression["key"]) not in expression["values"]:
            return False
    return True


def egress_of(docs, labels: dict[str, str]) -> list[dict[str, Any]]:
    return [rule for p in of_kind(docs, "NetworkPolicy").values() if selects(p, labels)
            for rule in p["spec"].get("egress", [])]


def pod_labels(docs, name: str) -> dict[str, str]:
    workloads = {**of_kind(docs, "Deployment"), **of_kind(docs, "Job"),
                 **{n: c["spec"]["jobTemplate"] for n, c in of_kind(docs, "CronJob").items()}}
    return workloads[name]["spec"]["template"]["metadata"]["labels"]
