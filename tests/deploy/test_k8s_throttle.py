"""The webhook delivery workers reach Redis (issue 27): an endpoint's rateLimitPerSecond is kept there
for every worker, and a worker that cannot reach it holds those deliveries back (fail closed), so a
policy that left the worker out would stop every limited endpoint for good. Also in compose, the
worker starts once Redis is healthy."""

from __future__ import annotations

from typing import Any

import pytest
from deploy_helpers import K8S, compose, dev_tree, egress_of, of_kind, pod_labels, render


@pytest.fixture(scope="module", params=["prod", "dev"])
def docs(request, tmp_path_factory) -> list[dict[str, Any]]:
    overlay = K8S / "overlays" / "prod" if request.param == "prod" else dev_tree(tmp_path_factory.mktemp("dev"))
    return render(overlay)


def test_the_delivery_workers_reach_redis_like_the_services_that_count_rates(docs):
    redis = of_kind(docs, "NetworkPolicy")["dps-redis"]["spec"]["egress"][0]
    cidr = redis["to"][0]["ipBlock"]["cidr"]
    for name in ("dps-webhook-dispatcher-worker", "dps-webhook-dispatcher", "dps-api"):
        reached = [rule for rule in egress_of(docs, pod_labels(docs, name))
                   if any(peer.get("ipBlock", {}).get("cidr") == cidr for peer in rule.get("to", []))]
        assert reached and {6379} <= {port["port"] for rule in reached for port in rule["ports"]}, name


def test_the_compose_worker_has_redis_and_waits_for_it():
    worker = compose()["services"]["webhooks-worker"]
    assert worker["environment"]["REDIS_URL"].startswith("redis://")
    assert worker["depends_on"]["redis"] == {"condition": "service_healthy"}
