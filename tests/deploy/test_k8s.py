"""deploy/k8s rendered by a real kustomize (dev and prod overlays) and validated strictly against the
Kubernetes schemas (kubernetes-validate), then checked for what a platform team relies on: probes,
resources, hardened pods, topology spread, HPAs, PDBs, migration ordering, scrape annotations and
network policies that say who may talk to whom."""

from __future__ import annotations

import ipaddress
import subprocess
from typing import Any

import kubernetes_validate
import pytest
from deploy_helpers import K8S, dev_tree, egress_of, of_kind, pod_labels, render, selects

KUBERNETES_VERSION = "1.32.0"  # the oldest minor the manifests promise to support
PRIVATE = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10"]
# Deployment -> (its image name ends so, the package whose schema its init container waits for)
WORKLOADS = {
    "dps-api": ("api:", "dps_api"),
    "dps-outbox-relay": ("api:", "dps_api"),
    "dps-webhook-dispatcher": ("webhook-dispatcher:", "dps_webhooks"),
    "dps-webhook-dispatcher-worker": ("webhook-dispatcher:", "dps_webhooks"),
    "dps-billing-connector": ("billing-connector:", "dps_billing"),
    "dps-billing-connector-worker": ("billing-connector:", "dps_billing"),
    "dps-billing-connector-relay": ("billing-connector:", "dps_billing"),
    "dps-console": ("console:", "dps_console"),
    "dps-console-worker": ("console:", "dps_console"),
}
AUTOSCALED = {"dps-api", "dps-webhook-dispatcher", "dps-webhook-dispatcher-worker", "dps-billing-connector-worker",
              "dps-console", "dps-console-worker"}
DATABASE_OWNERS = {
    "dps-api-database": {"dps-api", "dps-outbox-relay", "dps-api-migrate"},
    "dps-webhooks-database": {"dps-webhook-dispatcher", "dps-webhook-dispatcher-worker", "dps-webhooks-migrate"},
    "dps-billing-database": {"dps-billing-connector", "dps-billing-connector-worker", "dps-billing-connector-relay",
                             "dps-billing-migrate"},
    "dps-console-database": {"dps-console", "dps-console-worker", "dps-console-migrate", "dps-console-purge"},
}
HTTP_SIDES = {"dps-api", "dps-webhook-dispatcher", "dps-billing-connector"}


@pytest.fixture(scope="module", params=["prod", "dev"])
def docs(request, tmp_path_factory) -> list[dict[str, Any]]:
    overlay = K8S / "overlays" / "prod" if request.param == "prod" else dev_tree(tmp_path_factory.mktemp("dev"))
    return render(overlay)


def test_every_document_is_valid_kubernetes_strictly(docs):
    errors = []
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            errors.append(f"{doc['kind']}/{doc['metadata']['name']}: {exc.message}")
    assert not errors


def test_the_validator_rejects_an_unknown_field(docs):
    """Strict means strict: a misspelt field is an error, not ignored."""
    deployment = next(doc for doc in docs if doc["kind"] == "Deployment")
    broken = {**deployment, "spec": {**deployment["spec"], "replica": 2}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


def test_a_deployment_per_process_type(docs):
    names = set(of_kind(docs, "Deployment")) - {"dps-billing-stand-in"}
    assert names == set(WORKLOADS)
    assert all(doc["metadata"].get("namespace") for doc in docs if doc["kind"] != "Namespace")


@pytest.mark.parametrize("name", WORKLOADS)
def test_pods_are_probed_limited_hardened_and_spread(docs, name):
    pod = of_kind(docs, "Deployment")[name]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert {c["topologyKey"] for c in pod["topologySpreadConstraints"]} == {"topology.kubernetes.io/zone",
                                                                            "kubernetes.io/hostname"}
    tmp = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    for container in pod["containers"] + pod["initContainers"]:
        assert {"startupProbe", "readinessProbe", "livenessProbe"} <= set(container) or container in pod["initContainers"]
        assert set(container["resources"]) == {"requests", "limits"}
        security = container["securityContext"]
        assert security["readOnlyRootFilesystem"] is True and security["allowPrivilegeEscalation"] is False
        assert security["capabilities"] == {"drop": ["ALL"]}
        assert any(m["mountPath"] == "/tmp" and m["name"] in tmp for m in container["volumeMounts"])


@pytest.mark.parametrize("name", WORKLOADS)
def test_pods_wait_for_their_own_schema(docs, name):
    image, package = WORKLOADS[name]
    pod = of_kind(docs, "Deployment")[name]["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    assert init["image"] == pod["containers"][0]["image"] and image in init["image"]
    assert init["command"][-1] == package


def test_migration_jobs_run_before_the_rollout(docs):
    jobs = of_kind(docs, "Job")
    assert {job["spec"]["template"]["spec"]["containers"][0]["command"][0] for job in jobs.values()} == {
        "dealpricing-admin", "dealpricing-webhooks", "dealpricing-billing", "dealpricing-console"}
    for job in jobs.values():
        assert job["metadata"]["annotations"]["argocd.argoproj.io/hook"] == "PreSync"
        assert job["spec"]["template"]["spec"]["containers"][0]["command"][-1] == "migrate"


def test_autoscalers_own_the_replica_counts(docs):
    hpas = of_kind(docs, "HorizontalPodAutoscaler")
    assert set(hpas) == AUTOSCALED
    deployments = of_kind(docs, "Deployment")
    for name, hpa in hpas.items():
        assert hpa["apiVersion"] == "autoscaling/v2" and hpa["spec"]["scaleTargetRef"]["name"] == name
        assert "replicas" not in deployments[name]["spec"]  # an apply would fight the HPA


def test_every_workload_has_a_disruption_budget(docs):
    budgets = {pdb["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] for pdb in of_kind(docs, "PodDisruptionBudget").values()}
    assert set(WORKLOADS) <= budgets


@pytest.mark.parametrize("name", WORKLOADS)
def test_scrape_annotations_name_a_served_port(docs, name):
    template = of_kind(docs, "Deployment")[name]["spec"]["template"]
    annotations = template["metadata"]["annotations"]
    ports = {p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", [])}
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) in ports and annotations["prometheus.io/path"] == "/metrics"


def test_one_ingress_to_existing_services(docs):
    (ingress,) = of_kind(docs, "Ingress").values()
    services = of_kind(docs, "Service")
    for rule in ingress["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            assert backend["name"] in services
            assert backend["port"]["name"] in {p["name"] for p in services[backend["name"]]["spec"]["ports"]}


def test_rate_limits_trust_only_the_ingress_for_client_addresses(docs):
    """A range wider than the ingress controller's pods would let a client name its own address in
    X-Forwarded-For and escape its per-address budget."""
    config = of_kind(docs, "ConfigMap")["dps-config"]["data"]
    networks = [ipaddress.ip_network(part) for part in config["RATE_LIMIT_TRUSTED_PROXIES"].split(",")]
    assert networks and all(network.prefixlen >= 16 for network in networks), networks
    assert config["RATE_LIMIT_ORGANIZATION"] and config["RATE_LIMIT_ANONYMOUS"]


def test_no_secret_values_in_git():
    tracked = subprocess.run(["git", "ls-files", "deploy"], capture_output=True, text=True, cwd=K8S).stdout
    assert not [line for line in tracked.splitlines() if line.endswith(".env")]


# -- network policies -----------------------------------------------------------------------------


def test_default_deny_and_a_policy_per_process_type(docs):
    policies = of_kind(docs, "NetworkPolicy")
    deny = policies["dps-default-deny"]["spec"]
    assert deny["podSelector"] == {} and set(deny["policyTypes"]) == {"Ingress", "Egress"}
    for name in WORKLOADS:
        assert name in policies and policies[name]["spec"]["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": name}}


def test_delivery_workers_reach_the_internet_but_no_private_range(docs):
    internet = [peer["ipBlock"] for rule in egress_of(docs, pod_labels(docs, "dps-webhook-dispatcher-worker"))
                for peer in rule.get("to", []) if "ipBlock" in peer and peer["ipBlock"]["cidr"] == "0.0.0.0/0"]
    (block,) = internet
    assert set(PRIVATE) <= set(block["except"])


@pytest.mark.parametrize("name", ["dps-billing-connector", "dps-billing-connector-worker"])
def test_the_connector_reaches_only_the_platform_the_api_and_its_stores(docs, name):
    network = {p["metadata"]["name"] for p in of_kind(docs, "NetworkPolicy").values()}
    for rule in egress_of(docs, pod_labels(docs, name)):
        for peer in rule["to"]:
            if "ipBlock" in peer:
                cidr = peer["ipBlock"]["cidr"]
                if cidr == "0.0.0.0/0":
                    assert set(PRIVATE) <= set(peer["ipBlock"]["except"])
                    assert [p["port"] for p in rule["ports"]] == [443]
                else:  # its database or Redis: a data-store policy's address
                    ipaddress.ip_network(cidr)
            elif "namespaceSelector" in peer:
                assert peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "kube-system"}
            else:
                assert peer["podSelector"]["matchLabels"]["app.kubernetes.io/name"] in {
                    "dps-api", "dps-billing-stand-in"}
    assert "dps-billing-database" in network


@pytest.mark.parametrize("policy", DATABASE_OWNERS)
def test_databases_are_reachable_only_from_their_owners(docs, policy):
    policies = of_kind(docs, "NetworkPolicy")
    cidr = policies[policy]["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"]
    ipaddress.ip_network(cidr)  # the overlay's address, not the base's placeholder
    workloads = [*of_kind(docs, "Deployment"), *of_kind(docs, "Job"), *of_kind(docs, "CronJob")]
    reaching = {name for name in workloads for rule in egress_of(docs, pod_labels(docs, name))
                for peer in rule.get("to", []) if peer.get("ipBlock", {}).get("cidr") == cidr
                and any(p["port"] == 5432 for p in rule["ports"])}
    # several databases may share one server (dev): then its address serves each of their owners
    sharing = {p for p, o in DATABASE_OWNERS.items()
               if policies[p]["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"] == cidr}
    assert reaching == set().union(*(DATABASE_OWNERS[p] for p in sharing))


def reached_by(docs: list[dict[str, Any]], name: str) -> tuple[set[str], set[tuple[str, frozenset[int]]]]:
    """The pods (by name, on 8080) and the addresses (with their ports) the pods of ``name`` may reach."""
    pods, addresses = set(), set()
    for rule in egress_of(docs, pod_labels(docs, name)):
        for peer in rule["to"]:
            if "ipBlock" in peer:
                assert "except" not in peer["ipBlock"] and peer["ipBlock"]["cidr"] != "0.0.0.0/0"
                ports = {p["port"] for p in rule["ports"]}
                addresses.add((peer["ipBlock"]["cidr"], frozenset(ports)))
            elif "namespaceSelector" in peer:
                assert peer["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "kube-system"}
            else:
                pods.add(peer["podSelector"]["matchLabels"]["app.kubernetes.io/name"])
                assert [p["port"] for p in rule["ports"]] == [8080]
    return pods, addresses


def test_the_console_reaches_the_three_services_and_its_database_only(docs):
    database = of_kind(docs, "NetworkPolicy")["dps-console-database"]["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"]
    assert reached_by(docs, "dps-console") == (HTTP_SIDES, {(database, frozenset({5432}))})


def test_the_console_mail_worker_reaches_the_api_its_database_and_the_smtp_relay_only(docs):
    policies = of_kind(docs, "NetworkPolicy")
    database = policies["dps-console-database"]["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"]
    smtp = policies["dps-smtp-relay"]["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"]
    ipaddress.ip_network(smtp)  # the overlay's address, not the base's placeholder
    assert reached_by(docs, "dps-console-worker") == (
        {"dps-api"}, {(database, frozenset({5432})), (smtp, frozenset({587, 465}))})
    admitted = [peer for rule in policies["dps-api"]["spec"]["ingress"] for peer in rule["from"]]
    assert {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "dps-console-worker"}}} in admitted


@pytest.mark.parametrize("name", sorted(HTTP_SIDES))
def test_the_services_let_the_console_in(docs, name):
    console = pod_labels(docs, "dps-console")["app.kubernetes.io/name"]
    admitted = [peer for p in of_kind(docs, "NetworkPolicy").values()
                if selects(p, pod_labels(docs, name)) for rule in p["spec"].get("ingress", [])
                for peer in rule.get("from", []) if any(port["port"] == 8080 for port in rule.get("ports", []))]
    assert any(peer.get("podSelector", {}).get("matchLabels") == {"app.kubernetes.io/name": console} for peer in admitted)


def test_the_console_is_reached_only_through_the_ingress_and_by_monitoring(docs):
    (rule,) = of_kind(docs, "NetworkPolicy")["dps-console"]["spec"]["ingress"]
    assert [peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] for peer in rule["from"]] == [
        "ingress-nginx", "monitoring"]


def test_the_console_and_the_connector_agree_on_its_public_url(docs):
    console = of_kind(docs, "ConfigMap")["dps-console"]["data"]
    connector = of_kind(docs, "ConfigMap")["dps-billing-connector"]["data"]
    (ingress,) = of_kind(docs, "Ingress").values()
    host = ingress["spec"]["rules"][0]["host"]
    assert console["CONSOLE_PUBLIC_URL"] == connector["CONSOLE_URL"] == f"https://{host}/console"
    assert console["API_INTERNAL_URL"] == "http://dps-api" and console["API_URL"] == "http://dps-api/external/v1"


def test_the_console_is_purged_daily_with_its_database_alone(docs):
    (cron,) = of_kind(docs, "CronJob").values()
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["command"] == ["dealpricing-console", "purge"] and "console:" in container["image"]
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    assert pod["securityContext"]["runAsNonRoot"] is True and container["securityContext"]["readOnlyRootFilesystem"] is True
    database = of_kind(docs, "NetworkPolicy")["dps-console-database"]["spec"]["egress"][0]["to"][0]["ipBlock"]["cidr"]
    peers = [peer for rule in egress_of(docs, pod_labels(docs, "dps-console-purge")) for peer in rule["to"]]
    assert {peer["ipBlock"]["cidr"] for peer in peers if "ipBlock" in peer} == {database}
    assert not [peer for peer in peers if "podSelector" in peer and "namespaceSelector" not in peer]
