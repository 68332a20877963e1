"""``render_approval`` against ``ApprovalRequest``, the response model that documents it, on real
requests: pending with votes, decided with a comment, and approved at once with no step."""

from __future__ import annotations

import uuid

import pytest

from dps_common.json import dumps, loads
from dps_common.paging import PageRequest

from dps_api.adapters.outbox import OUTBOX
from dps_api.schemas.approvals import ApprovalRequest, render_approval
from dps_api.services.approvals import ApprovalFilters, ApprovalService

from approval_helpers import (
    APPROVALS,
    DISCOUNT_ABOVE_10,
    TERM_ABOVE_24,
    approval_group,
    decide,
    product,
    quote,
    rule,
    step,
    submit,
)
from quote_helpers import assert_documented


@pytest.fixture
def service(app) -> ApprovalService:
    return ApprovalService(app.context.tx, app.context.now, OUTBOX)


def principal(client, member):
    return client.app.context.authenticator.authenticate(member.key)


def check(client, org, service, approval_id: str) -> dict:
    """The service's view renders as documented, and as GET /approvals/{id} serves it."""
    view = service.get(principal(client, org.viewer), uuid.UUID(approval_id))
    rendered = render_approval(view)
    assert_documented(ApprovalRequest, rendered)
    served = client.simulate_get(f"{APPROVALS}/{approval_id}", headers=org.viewer.headers).json
    assert loads(dumps(rendered)) == served
    return served


def test_requests_in_every_shape_render_as_documented(client, org, service):
    m1, m2, f1 = (org.member("user", f"{n}@acme.example") for n in ("m1", "m2", "f1"))
    managers = approval_group(client, org, [m1, m2], required=2, name="Managers")
    finance = approval_group(client, org, [f1], name="Finance")
    rule(client, org, managers, DISCOUNT_ABOVE_10, step(client, org, "Manager review", 10), name="Deep discount")
    rule(client, org, finance, TERM_ABOVE_24)  # ungrouped: the final step
    item = product(client, org)

    pending = submit(client, org.user, quote(client, org.user, item["id"], discount="15", term=36)["id"])
    assert decide(client, m1, pending["id"], comment="fine by me").status_code == 200
    served = check(client, org, service, pending["id"])
    assert served["status"] == "PENDING" and served["steps"][0]["requirements"][0]["approvals"]
    assert served["steps"][1]["ruleGroupId"] is None and served["decisions"][0]["comment"] == "fine by me"

    rejected = submit(client, org.user, quote(client, org.user, item["id"], discount="15")["id"])
    assert decide(client, m2, rejected["id"], "reject").status_code == 200
    assert check(client, org, service, rejected["id"])["decidedAt"] is not None

    at_once = submit(client, org.user, quote(client, org.user, item["id"])["id"])
    assert check(client, org, service, at_once["id"])["steps"] == []


def test_list_items_render_as_documented(client, org, service):
    item = product(client, org)
    submitted = [submit(client, org.user, quote(client, org.user, item["id"])["id"]) for _ in range(2)]
    views = service.list(principal(client, org.viewer), ApprovalFilters(), PageRequest(10, None))
    for view in views:
        assert_documented(ApprovalRequest, render_approval(view))
    assert [loads(dumps(render_approval(v))) for v in views] == submitted[::-1]  # newest first
