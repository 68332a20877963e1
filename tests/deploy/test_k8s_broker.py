"""Who may reach RabbitMQ, decided from the rendered overlays: every process (a container of a
Deployment, Job or CronJob) whose effective environment has a non-empty ``AMQP_URL`` must be able to
open a connection to the broker's address and port, and no other process may.

Every HTTP process subscribes to key events when it has ``AMQP_URL`` (instant key revocation,
``dps_common.auth.revocations``); a policy that let only the relays and the delivery worker out left
them retrying against a closed port, and revocation fell back to the key cache's TTL unnoticed.

The effective environment is what the kubelet gives the container: its ``envFrom`` sources in order
(the rendered Secrets and ConfigMaps; in prod, where the Secrets come from a secret manager, the keys
of ``base/secret.template.yaml``), then its ``env``, which wins. The broker's address is the overlay's
``network.yaml`` (``BROKER_CIDR``) and its port the one in ``AMQP_URL``. The broker runs outside the
cluster in both overlays (no pod of ours is a broker: asserted), so who connects from the cluster is
decided here by egress; the broker's own side is its users and firewall (deploy/README.md).
"""

from __future__ import annotations

import base64
import ipaddress
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from deploy_helpers import K8S, dev_tree, egress_of, of_kind, render

AMQP_DEFAULT_PORTS = {"amqp": 5672, "amqps": 5671}
# the processes that use the broker (publish, consume, or subscribe to key events)
EXPECTED = {"dps-api", "dps-outbox-relay", "dps-webhook-dispatcher", "dps-webhook-dispatcher-worker",
            "dps-billing-connector", "dps-billing-connector-relay"}


@pytest.fixture(scope="module", params=["prod", "dev"])
def overlay(request, tmp_path_factory) -> tuple[str, list[dict[str, Any]]]:
    path = K8S / "overlays" / "prod" if request.param == "prod" else dev_tree(tmp_path_factory.mktemp("dev"))
    return request.param, render(path)


def template_secrets() -> dict[str, dict[str, str]]:
    documents = yaml.safe_load_all((K8S / "base" / "secret.template.yaml").read_text())
    return {doc["metadata"]["name"]: doc["stringData"] for doc in documents if doc}


def source_data(docs, kind: str, name: str) -> dict[str, str]:
    rendered = of_kind(docs, kind)
    if name in rendered:
        doc = rendered[name]
        data = {k: base64.b64decode(v).decode() for k, v in doc.get("data", {}).items()} if kind == "Secret" \
            else dict(doc.get("data", {}))
        return {**data, **doc.get("stringData", {})}
    assert kind == "Secret", f"ConfigMap {name} is referenced but not rendered"
    return template_secrets()[name]  # prod: made by a secret manager with the template's keys


def environment(docs, container: dict[str, Any]) -> dict[str, str]:
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        if "secretRef" in source:
            env.update(source_data(docs, "Secret", source["secretRef"]["name"]))
        else:
            env.update(source_data(docs, "ConfigMap", source["configMapRef"]["name"]))
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = var["value"]
        else:
            ref = var["valueFrom"].get("secretKeyRef") or var["valueFrom"]["configMapKeyRef"]
            kind = "Secret" if "secretKeyRef" in var["valueFrom"] else "ConfigMap"
            env[var["name"]] = source_data(docs, kind, ref["name"])[ref["key"]]
    return env


def processes(docs) -> list[tuple[str, str, dict[str, str], dict[str, Any]]]:
    """(workload, container, pod labels, container) for every container of every workload."""
    templates = {**{n: d["spec"]["template"] for n, d in of_kind(docs, "Deployment").items()},
                 **{n: d["spec"]["template"] for n, d in of_kind(docs, "Job").items()},
                 **{n: d["spec"]["jobTemplate"]["spec"]["template"] for n, d in of_kind(docs, "CronJob").items()}}
    return [(name, container["name"], template["metadata"]["labels"], container)
            for name, template in templates.items()
            for container in template["spec"].get("initContainers", []) + template["spec"]["containers"]]


def broker_address(overlay_name: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    network = yaml.safe_load((K8S / "overlays" / overlay_name / "network.yaml").read_text())
    return ipaddress.ip_network(network["data"]["BROKER_CIDR"])


def reaches(docs, labels: dict[str, str], address, port: int) -> bool:
    """Whether the policies selecting these pod labels let them open TCP ``port`` to every address of
    ``address`` (an ipBlock that holds it and none of whose exceptions overlap it)."""
    for rule in egress_of(docs, labels):
        if not any(p.get("protocol", "TCP") == "TCP" and p["port"] == port for p in rule.get("ports", [])) \
                and rule.get("ports"):
            continue
        for peer in rule.get("to", []):
            block = peer.get("ipBlock")
            if not block:
                continue
            cidr = ipaddress.ip_network(block["cidr"])
            if cidr.version != address.version or not address.subnet_of(cidr):  # type: ignore[arg-type]
                continue
            if not any(address.overlaps(ipaddress.ip_network(e)) for e in block.get("except", [])):
                return True
    return False


def test_every_process_with_amqp_url_reaches_the_broker_and_no_other_does(overlay):
    name, docs = overlay
    address = broker_address(name)
    with_url, reaching, wrong = set(), set(), []
    for workload, container_name, labels, container in processes(docs):
        url = environment(docs, container).get("AMQP_URL", "")
        port = AMQP_DEFAULT_PORTS["amqps"]
        if url:
            with_url.add(workload)
            parts = urlsplit(url)
            port = parts.port or AMQP_DEFAULT_PORTS[parts.scheme]
            if name == "dev":  # the generated Secret names the broker by its address: network.yaml's
                assert ipaddress.ip_address(parts.hostname) in address, (workload, url)
            if not reaches(docs, labels, address, port):
                wrong.append(f"{workload}/{container_name} has AMQP_URL but cannot reach {address} port {port}")
        if any(reaches(docs, labels, address, p) for p in AMQP_DEFAULT_PORTS.values()):
            reaching.add(workload)
    assert not wrong, wrong
    assert reaching <= with_url, f"reach the broker without using it: {sorted(reaching - with_url)}"
    assert with_url == EXPECTED


def test_the_broker_is_not_a_pod_of_ours(overlay):
    """The broker is outside the cluster (network.yaml's address): no in-cluster ingress to decide."""
    _, docs = overlay
    images = [container["image"] for *_, container in processes(docs)]
    assert images and not [image for image in images if "rabbitmq" in image.lower()]


def test_the_reach_check_sees_a_closed_port_and_an_excluded_range(overlay):
    """The check above can fail: the delivery worker's internet rule holds 10.0.0.0/8 only as an
    exception, and the console has no broker rule at all."""
    name, docs = overlay
    address = broker_address(name)
    internet = ipaddress.ip_network("93.184.215.0/24")
    worker = {"app.kubernetes.io/name": "dps-webhook-dispatcher-worker"}
    assert reaches(docs, worker, internet, 443) and not reaches(docs, worker, internet, 80)
    assert not reaches(docs, {"app.kubernetes.io/name": "dps-console"}, address, 5671)
    assert not reaches(docs, {"app.kubernetes.io/name": "dps-console"}, address, 5672)
