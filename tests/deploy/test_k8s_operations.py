"""Operations on the rendered overlays: HTTP pods drain before they stop (no 502 during a rollout),
the connector's internet egress has the delivery worker's IPv6 rule, and the dev overlay without its
generated secrets says what to run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from deploy_helpers import K8S, ROOT, dev_tree, egress_of, load_module, of_kind, pod_labels, render

HTTP_PODS = ["dps-api", "dps-webhook-dispatcher", "dps-billing-connector", "dps-console"]
INTERNET_PODS = ["dps-webhook-dispatcher-worker", "dps-billing-connector", "dps-billing-connector-worker"]
PRIVATE_V6 = {"fc00::/7", "fe80::/10", "::ffff:0:0/96"}
PRIVATE_V4 = {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "127.0.0.0/8"}
# the ingress controller and kube-proxy drop an endpoint a few seconds after the pod is marked
# terminating; until then new requests still arrive, and gunicorn must still accept them
MIN_PAUSE_SECONDS = 5
CHECK_SECRETS = K8S / "overlays" / "dev" / "check_secrets.py"


@pytest.fixture(scope="module", params=["prod", "dev"])
def docs(request, tmp_path_factory) -> list[dict[str, Any]]:
    overlay = K8S / "overlays" / "prod" if request.param == "prod" else dev_tree(tmp_path_factory.mktemp("dev"))
    return render(overlay)


def pause_seconds(container: dict[str, Any]) -> int:
    """The preStop pause: the kubelet's sleep action, or ``sleep N`` run in the container."""
    pre_stop = container["lifecycle"]["preStop"]
    if "sleep" in pre_stop:
        return int(pre_stop["sleep"]["seconds"])
    command = pre_stop["exec"]["command"]
    assert command[0] in {"sleep", "/bin/sleep", "/usr/bin/sleep"} and len(command) == 2, command
    return int(command[1])


@pytest.mark.parametrize("name", HTTP_PODS)
def test_http_pods_drain_before_gunicorn_stops(docs, name):
    """SIGTERM only after the pause (the endpoint is gone from the ingress by then), and the grace
    period covers the pause plus gunicorn's graceful timeout, so in-flight requests finish."""
    gunicorn = load_module(ROOT / "libs" / "common" / "src" / "dps_common" / "gunicorn_conf.py")
    pod = of_kind(docs, "Deployment")[name]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"][0] == "gunicorn"
    pause = pause_seconds(container)
    assert pause >= MIN_PAUSE_SECONDS
    assert pod["terminationGracePeriodSeconds"] > pause + gunicorn.graceful_timeout


def test_the_pause_reader_rejects_a_missing_pause():
    with pytest.raises(KeyError):
        pause_seconds({"name": "http"})
    assert pause_seconds({"lifecycle": {"preStop": {"sleep": {"seconds": 7}}}}) == 7


@pytest.mark.parametrize("name", INTERNET_PODS)
def test_internet_egress_excludes_private_ranges_in_both_families(docs, name):
    blocks = [peer["ipBlock"] for rule in egress_of(docs, pod_labels(docs, name)) for peer in rule["to"]
              if "ipBlock" in peer and peer["ipBlock"]["cidr"] in {"0.0.0.0/0", "::/0"}]
    by_cidr = {block["cidr"]: block for block in blocks}
    assert set(by_cidr) == {"0.0.0.0/0", "::/0"} and len(blocks) == 2, blocks
    assert set(by_cidr["0.0.0.0/0"]["except"]) >= PRIVATE_V4
    assert set(by_cidr["::/0"]["except"]) >= PRIVATE_V6
    for rule in egress_of(docs, pod_labels(docs, name)):
        if any(peer.get("ipBlock", {}).get("cidr") in by_cidr for peer in rule["to"]):
            assert [p["port"] for p in rule["ports"]] == [443]


# -- the dev overlay's generated secrets -----------------------------------------------------------


def check(overlay: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(overlay / "check_secrets.py")], capture_output=True, text=True,
                          timeout=60)


def test_the_dev_overlay_without_secrets_says_to_make_them(tmp_path):
    tree = tmp_path / "k8s"
    shutil.copytree(K8S, tree, ignore=shutil.ignore_patterns("*.env", "__pycache__"))
    done = check(tree / "overlays" / "dev")
    assert done.returncode == 2
    assert "make k8s-dev-secrets" in done.stderr and "api.env" in done.stderr


def test_the_dev_overlay_with_made_secrets_passes_the_check(tmp_path):
    done = check(dev_tree(tmp_path))
    assert done.returncode == 0, done.stderr


def test_a_secrets_file_missing_a_key_is_named(tmp_path):
    overlay = dev_tree(tmp_path)
    env = overlay / "secrets" / "console.env"
    env.write_text("".join(line + "\n" for line in env.read_text().splitlines() if not line.startswith("SMTP_URL=")))
    done = check(overlay)
    assert done.returncode == 2
    assert "console.env" in done.stderr and "SMTP_URL" in done.stderr and "make k8s-dev-secrets" in done.stderr


def test_the_check_reads_the_keys_of_the_secret_template():
    keys = load_module(CHECK_SECRETS).template_keys()
    assert set(keys) == {"dps-api", "dps-webhook-dispatcher", "dps-billing-connector", "dps-console"}
    assert "CONSOLE_API_TOKEN" in keys["dps-api"] and "SMTP_URL" in keys["dps-console"]


def test_the_check_knows_the_files_the_overlay_generates_secrets_from():
    kustomization = yaml.safe_load((K8S / "overlays" / "dev" / "kustomization.yaml").read_text())
    generated = {Path(g["envs"][0]).name: g["name"] for g in kustomization["secretGenerator"]}
    assert generated == load_module(CHECK_SECRETS).FILES
