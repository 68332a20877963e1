"""Spec section 8 for the webhook lists: GET /webhook-configs pages 100 by default, 500 at most;
GET /webhook-configs/{id}/deliveries 50 by default, 500 at most; 0 and max + 1 are a 400 (never
clamped), and a cursor the service did not issue for that list is a 400 (section 4, paging rule 3).
Deliveries here are test deliveries (POST /webhook-configs/{id}/test), sent to the real receiver."""

from __future__ import annotations

import pytest

import contract_data as data
from contract_client import assert_problem

CONFIGS = "/webhook-configs"


@pytest.fixture(scope="module")
def full_org(make_org, webhooks):
    """An organization with one endpoint more than the default page of endpoints, the first of
    them with one delivery more than the default page of deliveries."""
    org = make_org("Webhook Limits Co")
    endpoints = data.many(101, lambda: webhooks.register(org))
    busy = endpoints[0]
    data.many(51, lambda: webhooks.send_test(busy))
    webhooks.wait_deliveries(busy, 51, "SUCCESS", timeout=60)
    return org, busy


def _deliveries_path(endpoint) -> str:
    return f"{CONFIGS}/{endpoint.id}/deliveries"


def test_webhook_configs_default_page_is_100(webhooks, full_org):
    org, _ = full_org
    body = webhooks.hooks.ok("GET", CONFIGS, org.admin, status=200)
    assert len(body["webhookConfigs"]) == 100
    assert isinstance(body["nextCursor"], str)
    rest = webhooks.hooks.ok("GET", CONFIGS, org.admin, params={"cursor": body["nextCursor"]}, status=200)
    assert len(rest["webhookConfigs"]) == 1 and rest["nextCursor"] is None
    ids = [c["id"] for c in body["webhookConfigs"] + rest["webhookConfigs"]]
    assert len(set(ids)) == 101


def test_webhook_configs_limit_500_is_the_maximum(webhooks, full_org):
    org, _ = full_org
    body = webhooks.hooks.ok("GET", CONFIGS, org.admin, params={"limit": 500}, status=200)
    assert len(body["webhookConfigs"]) == 101 and body["nextCursor"] is None
    for limit in (0, 501, -1):
        problem = assert_problem(webhooks.hooks.get(CONFIGS, org.admin, params={"limit": limit}), 400)
        assert "limit" in problem["detail"], problem


def test_deliveries_default_page_is_50(webhooks, full_org):
    org, busy = full_org
    body = webhooks.hooks.ok("GET", _deliveries_path(busy), org.admin, status=200)
    assert len(body["deliveries"]) == 50
    assert isinstance(body["nextCursor"], str)
    rest = webhooks.hooks.ok("GET", _deliveries_path(busy), org.admin, params={"cursor": body["nextCursor"]}, status=200)
    assert len(rest["deliveries"]) == 1 and rest["nextCursor"] is None


def test_deliveries_limit_500_is_the_maximum(webhooks, full_org):
    org, busy = full_org
    body = webhooks.hooks.ok("GET", _deliveries_path(busy), org.admin, params={"limit": 500}, status=200)
    assert len(body["deliveries"]) == 51 and body["nextCursor"] is None
    for limit in (0, 501, -1):
        problem = assert_problem(webhooks.hooks.get(_deliveries_path(busy), org.admin, params={"limit": limit}), 400)
        assert "limit" in problem["detail"], problem


def test_a_cursor_not_issued_for_the_list_is_400(webhooks, full_org, api, make_org):
    org, busy = full_org
    configs_cursor = webhooks.hooks.ok("GET", CONFIGS, org.admin, params={"limit": 1}, status=200)["nextCursor"]
    deliveries_cursor = webhooks.hooks.ok("GET", _deliveries_path(busy), org.admin, params={"limit": 1}, status=200)["nextCursor"]
    catalog = make_org("Webhook Limits Catalog")  # products elsewhere: no events for full_org's endpoints
    data.many(3, lambda: data.product(api, catalog.admin))
    products_cursor = api.ok("GET", "/products", catalog.admin, params={"limit": 1}, status=200)["nextCursor"]
    assert all(isinstance(c, str) for c in (configs_cursor, deliveries_cursor, products_cursor))

    foreign = {
        CONFIGS: [deliveries_cursor, products_cursor, "not-a-cursor", configs_cursor[:-2]],
        _deliveries_path(busy): [configs_cursor, products_cursor, "not-a-cursor", deliveries_cursor[:-2]],
    }
    for path, cursors in foreign.items():
        for cursor in cursors:
            assert_problem(webhooks.hooks.get(path, org.admin, params={"cursor": cursor}), 400)
