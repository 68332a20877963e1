"""The events stream's shards in the manifests (issue 19): every process that routes or consumes the
events (the two relays, the dispatcher's workers) reads EVENTS_SHARDS from the same ConfigMap, so
they cannot disagree, and its value is one the settings accept."""

from __future__ import annotations

from test_k8s import docs, of_kind  # noqa: F401  (the rendered overlays, prod and dev)

from dps_common.messaging.shards import MAX_SHARDS

SHARDED = {"dps-outbox-relay", "dps-billing-connector-relay", "dps-webhook-dispatcher-worker"}


def test_relays_and_workers_take_the_shards_from_one_config_map(docs):  # noqa: F811
    config = of_kind(docs, "ConfigMap")["dps-config"]["data"]
    assert 1 <= int(config["EVENTS_SHARDS"]) <= MAX_SHARDS
    deployments = of_kind(docs, "Deployment")
    assert SHARDED <= set(deployments)
    for name in SHARDED:
        for container in deployments[name]["spec"]["template"]["spec"]["containers"]:
            sources = [source.get("configMapRef", {}).get("name") for source in container.get("envFrom", [])]
            assert "dps-config" in sources, name
            assert "EVENTS_SHARDS" not in {env["name"] for env in container.get("env", [])}, name  # no override
