"""deploy/k8s/overlays/platform (issue 28): the production overlay with its broker and database run
inside the cluster by their operators, a RabbitmqCluster of three nodes and a CloudNativePG Cluster
with a synchronous standby. The Kubernetes kinds are validated strictly, as in test_k8s.py; the two
operators' kinds are not in kubernetes-validate's schemas (CRDs, not available offline here), so
their schema validation is skipped explicitly and the fields the services rely on are checked."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
from deploy_helpers import K8S, of_kind, render

KUBERNETES_VERSION = "1.32.0"
# kind -> apiVersion of the operators' custom resources (no schema offline: checked field by field below)
CUSTOM_KINDS = {"RabbitmqCluster": "rabbitmq.com/v1beta1", "Cluster": "postgresql.cnpg.io/v1",
                "Database": "postgresql.cnpg.io/v1"}


@pytest.fixture(scope="module")
def docs() -> list[dict[str, Any]]:
    return render(K8S / "overlays" / "platform")


def test_kubernetes_kinds_are_valid_strictly_and_only_the_operators_kinds_are_skipped(docs):
    skipped, problems = set(), []
    for doc in docs:
        if doc["kind"] in CUSTOM_KINDS:
            assert doc["apiVersion"] == CUSTOM_KINDS[doc["kind"]], doc["metadata"]["name"]
            skipped.add(doc["kind"])
            continue
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            problems.append(f"{doc['kind']}/{doc['metadata']['name']}: {exc.message}")
    assert problems == []
    assert skipped == set(CUSTOM_KINDS)


def test_the_services_are_the_production_overlays(docs):
    prod = render(K8S / "overlays" / "prod")
    ours = {(d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] not in CUSTOM_KINDS}
    assert ours == {(d["kind"], d["metadata"]["name"]) for d in prod}


def test_the_broker_is_three_nodes_spread_over_zones(docs):
    [broker] = of_kind(docs, "RabbitmqCluster").values()
    spec = broker["spec"]
    assert spec["replicas"] == 3  # quorum queues: a majority (2) survives one node lost
    assert broker["metadata"]["namespace"] == "dps"
    assert "cluster_partition_handling = pause_minority" in spec["rabbitmq"]["additionalConfig"]
    spread = spec["override"]["statefulSet"]["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert spread[0]["topologyKey"] == "topology.kubernetes.io/zone"
    assert spec["resources"]["limits"]["memory"] == spec["resources"]["requests"]["memory"]


def test_the_database_fails_over_to_a_synchronous_standby_with_a_database_per_service(docs):
    [cluster] = of_kind(docs, "Cluster").values()
    spec = cluster["spec"]
    assert spec["instances"] >= 2 and spec["minSyncReplicas"] >= 1  # an answered commit is on a standby
    assert spec["bootstrap"]["initdb"]["database"] == "dps_api"
    databases = {d["spec"]["name"]: d["spec"]["owner"] for d in of_kind(docs, "Database").values()}
    assert databases == {"dps_webhooks": "dps_webhooks", "dps_billing": "dps_billing", "dps_console": "dps_console"}
    assert all(d["spec"]["cluster"]["name"] == cluster["metadata"]["name"] for d in of_kind(docs, "Database").values())
    roles = {role["name"] for role in spec["managed"]["roles"]}
    assert roles == {"dps_webhooks", "dps_billing", "dps_console"}
