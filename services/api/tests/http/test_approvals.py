"""Approval requests through build_http: submit, recall, approve, reject, the approval chain, who may
decide, organization scoping and events. The list is in test_approval_list.py, races in
test_approval_races.py."""

from __future__ import annotations

import uuid

import pytest

from approval_helpers import (
    APPROVALS,
    DISCOUNT_ABOVE_10,
    TERM_ABOVE_24,
    V1,
    approval_group,
    decide,
    event_types,
    product,
    quote,
    quote_status,
    recall,
    rule,
    step,
    submit,
)


@pytest.fixture
def chain(client, org):
    """Two steps: managers (two approvals of two) for discounts above 10 %, then finance (one) for
    USD totals above 1000.00."""
    m1, m2, f1 = (org.member("user", f"{n}@acme.example") for n in ("m1", "m2", "f1"))
    managers = approval_group(client, org, [m1, m2], required=2, name="Managers")
    finance = approval_group(client, org, [f1], name="Finance")
    first, second = step(client, org, "Manager review", 10), step(client, org, "Finance review", 20)
    # created finance-first: the chain follows positions, not creation order
    rule(client, org, finance, {"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "1000", "currency": "USD"}, second)
    rule(client, org, managers, DISCOUNT_ABOVE_10, first, name="Deep discount")
    return {"m1": m1, "m2": m2, "f1": f1, "managers": managers, "finance": finance, "product": product(client, org)}


# --- submit ------------------------------------------------------------------------------------


def test_no_rule_fired_approves_at_once(client, org, tx):
    # a TCV rule in EUR never fires for a USD quote, however large
    eur = {"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "1", "currency": "EUR"}
    rule(client, org, approval_group(client, org, [org.admin]), eur)
    q = quote(client, org.user, product(client, org)["id"], quantity="50")
    approval = submit(client, org.user, q["id"])
    assert approval["status"] == "APPROVED"
    assert (approval["steps"], approval["currentStep"], approval["decisions"]) == ([], None, [])
    assert approval["decidedAt"] is not None
    assert (approval["quoteId"], approval["requestedByUserId"]) == (q["id"], str(org.user.user_id))
    assert quote_status(client, org, q["id"]) == "APPROVED"
    assert event_types(tx, org) == [
        ("approval.requested", approval["id"]),
        ("approval.approved", approval["id"]),
        ("quote.approved", q["id"]),
    ]


def test_two_step_chain_is_approved_by_members_of_each_group(client, org, tx, chain):
    q = quote(client, org.user, chain["product"]["id"], quantity="2", discount="20")  # 160.00 x 12 = 1920.00
    approval = submit(client, org.user, q["id"])
    assert approval["status"] == "PENDING" and approval["currentStep"] == 0
    assert quote_status(client, org, q["id"]) == "PENDING_APPROVAL"
    assert [(s["ruleGroupName"], s["status"]) for s in approval["steps"]] == [
        ("Manager review", "PENDING"),
        ("Finance review", "WAITING"),
    ]
    first = approval["steps"][0]
    assert [r["name"] for r in first["rules"]] == ["Deep discount"]
    assert first["requirements"][0]["approvalGroupId"] == chain["managers"]["id"]
    assert first["requirements"][0]["requiredApprovals"] == 2
    approval_id = approval["id"]

    resp = decide(client, chain["m1"], approval_id, comment="ok from me")
    assert resp.status_code == 200 and resp.json["currentStep"] == 0
    assert [a["userId"] for a in resp.json["steps"][0]["requirements"][0]["approvals"]] == [str(chain["m1"].user_id)]
    early = decide(client, chain["f1"], approval_id)  # finance waits for the managers' step
    assert early.status_code == 403 and early.json["code"] == "not_an_approver"

    resp = decide(client, chain["m2"], approval_id)
    assert resp.json["currentStep"] == 1
    assert [s["status"] for s in resp.json["steps"]] == ["APPROVED", "PENDING"]
    assert quote_status(client, org, q["id"]) == "PENDING_APPROVAL"

    resp = decide(client, chain["f1"], approval_id)
    assert resp.status_code == 200
    done = resp.json
    assert done["status"] == "APPROVED" and done["currentStep"] is None and done["decidedAt"]
    assert [(d["userId"], d["decision"], d["step"]) for d in done["decisions"]] == [
        (str(chain["m1"].user_id), "APPROVE", 0),
        (str(chain["m2"].user_id), "APPROVE", 0),
        (str(chain["f1"].user_id), "APPROVE", 1),
    ]
    assert done["decisions"][0]["comment"] == "ok from me"
    assert quote_status(client, org, q["id"]) == "APPROVED"
    assert client.simulate_get(f"{APPROVALS}/{approval_id}", headers=org.viewer.headers).json == done
    assert event_types(tx, org) == [
        ("approval.requested", approval_id),
        ("quote.submitted", q["id"]),
        ("approval.vote_recorded", approval_id),
        ("approval.step_approved", approval_id),
        ("approval.step_approved", approval_id),
        ("approval.approved", approval_id),
        ("quote.approved", q["id"]),
    ]


def test_only_the_steps_that_fired_are_in_the_chain(client, org, chain):
    small = quote(client, org.user, chain["product"]["id"], discount="20")  # 80.00 x 12 = 960.00: no finance step
    approval = submit(client, org.user, small["id"])
    assert [s["ruleGroupName"] for s in approval["steps"]] == ["Manager review"]
    big = quote(client, org.user, chain["product"]["id"], quantity="20")  # no discount: finance only
    assert [s["ruleGroupName"] for s in submit(client, org.user, big["id"])["steps"]] == ["Finance review"]


def test_locked_price_and_term_rules_and_ungrouped_final_step(client, org):
    approvers = approval_group(client, org, [org.member("user", "a@acme.example")])
    legal = step(client, org, "Legal", 1)
    rule(client, org, approvers, {"type": "LOCKED_PRICE_BELOW_LIST"}, name="Locked below list")
    rule(client, org, approvers, TERM_ABOVE_24, legal, name="Long term")
    locked = product(client, org, locked=True)
    # an admin key may negotiate a locked product below list, for the user's quote
    q = quote(client, org.admin, locked["id"], discount="5", term=36, ownerUserId=str(org.user.user_id))
    approval = submit(client, org.user, q["id"])
    assert [(s["ruleGroupName"], [r["name"] for r in s["rules"]]) for s in approval["steps"]] == [
        ("Legal", ["Long term"]),
        (None, ["Locked below list"]),
    ]


def test_who_may_submit_and_what_can_be_submitted(client, org, chain):
    q = quote(client, org.user, chain["product"]["id"], discount="20")
    other = org.member("user", "other@acme.example")
    resp = client.simulate_post(f"{V1}/pricing-quotes/{q['id']}/approval", headers=other.headers)
    assert resp.status_code == 403 and resp.json["code"] == "not_quote_owner"
    resp = client.simulate_post(f"{V1}/pricing-quotes/{q['id']}/approval", headers=org.viewer.headers)
    assert resp.status_code == 403 and resp.json["code"] == "missing_scope"
    approval = submit(client, org.admin, q["id"])  # an admin key works on other users' quotes
    assert approval["requestedByUserId"] == str(org.admin.user_id)
    assert approval["quoteOwnerUserId"] == str(org.user.user_id)
    again = client.simulate_post(f"{V1}/pricing-quotes/{q['id']}/approval", headers=org.user.headers)
    assert again.status_code == 409 and again.json["code"] == "quote_not_draft"

    empty = quote(client, org.user, chain["product"]["id"], lines=False)
    resp = client.simulate_post(f"{V1}/pricing-quotes/{empty['id']}/approval", headers=org.user.headers)
    assert resp.status_code == 409 and resp.json["code"] == "quote_has_no_lines"
    missing = client.simulate_post(f"{V1}/pricing-quotes/{uuid.uuid4()}/approval", headers=org.user.headers)
    assert missing.status_code == 404


def test_a_chain_the_owner_would_have_to_complete_is_refused_and_nothing_is_written(client, org, tx):
    tiny = approval_group(client, org, [org.user, org.member("user", "b@acme.example")], required=2)
    rule(client, org, tiny, TERM_ABOVE_24)
    q = quote(client, org.user, product(client, org)["id"], term=36)
    resp = client.simulate_post(f"{V1}/pricing-quotes/{q['id']}/approval", headers=org.user.headers)
    assert resp.status_code == 409 and resp.json["code"] == "approval_unsatisfiable"
    assert quote_status(client, org, q["id"]) == "DRAFT"
    assert event_types(tx, org) == []


# --- deciding ----------------------------------------------------------------------------------


def test_reject_closes_the_request_and_rejects_the_quote(client, org, tx, chain):
    q = quote(client, org.user, chain["product"]["id"], quantity="2", discount="20")
    approval = submit(client, org.user, q["id"])
    resp = decide(client, chain["m2"], approval["id"], "reject", comment="Too deep")
    assert resp.status_code == 200
    assert resp.json["status"] == "REJECTED"
    assert [s["status"] for s in resp.json["steps"]] == ["REJECTED", "SKIPPED"]
    (decision,) = resp.json["decisions"]
    assert decision == {
        "userId": str(chain["m2"].user_id),
        "decision": "REJECT",
        "comment": "Too deep",
        "at": resp.json["decidedAt"],
        "step": 0,
    }
    assert quote_status(client, org, q["id"]) == "REJECTED"
    for verb, member in (("approve", chain["m1"]), ("reject", chain["m1"])):
        late = decide(client, member, approval["id"], verb)
        assert late.status_code == 409 and late.json["code"] == "approval_not_pending"
    assert event_types(tx, org)[-2:] == [("approval.rejected", approval["id"]), ("quote.rejected", q["id"])]


def test_self_approval_is_refused(client, org):
    # the owner is a member of the group the step waits on; another member could still approve
    colleague = org.member("user", "colleague@acme.example")
    rule(client, org, approval_group(client, org, [org.user, colleague], name="With owner"), TERM_ABOVE_24)
    q = quote(client, org.user, product(client, org)["id"], term=36)
    approval = submit(client, org.user, q["id"])
    for verb in ("approve", "reject"):
        resp = decide(client, org.user, approval["id"], verb)
        assert resp.status_code == 403 and resp.json["code"] == "self_approval"
    assert decide(client, colleague, approval["id"]).json["status"] == "APPROVED"


def test_non_members_cannot_decide_and_view_only_keys_lack_the_scope(client, org, chain):
    q = quote(client, org.user, chain["product"]["id"], discount="20")
    approval = submit(client, org.user, q["id"])
    for member in (org.admin, org.member("user", "stranger@acme.example")):
        for verb in ("approve", "reject"):
            resp = decide(client, member, approval["id"], verb)
            assert resp.status_code == 403 and resp.json["code"] == "not_an_approver"
    resp = decide(client, org.viewer, approval["id"])
    assert resp.status_code == 403 and resp.json["code"] == "missing_scope"


def test_approving_twice_is_refused_not_counted(client, org, chain):
    q = quote(client, org.user, chain["product"]["id"], discount="20")
    approval = submit(client, org.user, q["id"])
    assert decide(client, chain["m1"], approval["id"]).status_code == 200
    again = decide(client, chain["m1"], approval["id"])
    assert again.status_code == 409 and again.json["code"] == "already_approved"
    read = client.simulate_get(f"{APPROVALS}/{approval['id']}", headers=org.user.headers).json
    assert len(read["steps"][0]["requirements"][0]["approvals"]) == 1
    assert read["status"] == "PENDING"


def test_decision_bodies_are_optional_and_validated(client, org, chain):
    q = quote(client, org.user, chain["product"]["id"], discount="20")
    approval = submit(client, org.user, q["id"])
    for comment in ("x" * 2001, "nul \x00"):
        bad = decide(client, chain["m1"], approval["id"], comment=comment)
        assert bad.status_code == 400 and bad.json["errors"][0]["field"] == "comment"
    no_body = client.simulate_post(f"{APPROVALS}/{approval['id']}/approve", headers=chain["m1"].headers)
    assert no_body.status_code == 200
    assert no_body.json["decisions"][0]["comment"] is None


def test_the_chain_is_a_snapshot_of_the_configuration_at_submit_time(client, org, chain):
    q = quote(client, org.user, chain["product"]["id"], discount="20")
    approval = submit(client, org.user, q["id"])
    newcomer = org.member("user", "newcomer@acme.example")
    client.simulate_patch(
        f"{V1}/approval-groups/{chain['managers']['id']}",
        json={"memberUserIds": [str(newcomer.user_id)], "requiredApprovals": 1},
        headers=org.admin.headers,
    )
    for r in client.simulate_get(f"{V1}/approval-rules", headers=org.admin.headers).json["approvalRules"]:
        client.simulate_delete(f"{V1}/approval-rules/{r['id']}", headers=org.admin.headers)
    unchanged = client.simulate_get(f"{APPROVALS}/{approval['id']}", headers=org.user.headers).json
    assert unchanged["steps"] == approval["steps"]
    assert decide(client, newcomer, approval["id"]).json["code"] == "not_an_approver"
    decide(client, chain["m1"], approval["id"])
    assert decide(client, chain["m2"], approval["id"]).json["status"] == "APPROVED"


# --- recall ------------------------------------------------------------------------------------


def test_recall_returns_the_quote_to_draft_and_it_can_be_submitted_again(client, org, tx, chain):
    q = quote(client, org.user, chain["product"]["id"], discount="20")
    approval = submit(client, org.user, q["id"])
    other = org.member("user", "other@acme.example")
    refused = recall(client, other, q["id"])
    assert refused.status_code == 403 and refused.json["code"] == "not_quote_owner"
    resp = recall(client, org.user, q["id"])
    assert resp.status_code == 200
    assert resp.json["id"] == approval["id"] and resp.json["status"] == "RECALLED"
    assert resp.json["decisions"][-1]["decision"] == "RECALL"
    assert [s["status"] for s in resp.json["steps"]] == ["RECALLED"]
    assert quote_status(client, org, q["id"]) == "DRAFT"
    again = recall(client, org.user, q["id"])
    assert again.status_code == 409 and again.json["code"] == "no_pending_approval"
    late = decide(client, chain["m1"], approval["id"])
    assert late.status_code == 409 and late.json["code"] == "approval_not_pending"
    assert event_types(tx, org)[-2:] == [("approval.recalled", approval["id"]), ("quote.recalled", q["id"])]

    second = submit(client, org.user, q["id"])
    assert second["id"] != approval["id"] and second["status"] == "PENDING"
    assert recall(client, org.admin, q["id"]).status_code == 200  # admin keys act on others' quotes


def test_recall_of_an_approved_quote_is_refused(client, org):
    q = quote(client, org.user, product(client, org)["id"])
    submit(client, org.user, q["id"])
    resp = recall(client, org.user, q["id"])
    assert resp.status_code == 409 and resp.json["code"] == "no_pending_approval"


# --- organization scoping ---------------------------------------------------------------------


def test_another_organizations_requests_and_quotes_are_not_found(client, org, other_org):
    theirs = quote(client, other_org.user, product(client, other_org)["id"])
    approval = submit(client, other_org.user, theirs["id"])
    assert client.simulate_get(f"{APPROVALS}/{approval['id']}", headers=org.admin.headers).status_code == 404
    for verb in ("approve", "reject"):
        assert decide(client, org.admin, approval["id"], verb).status_code == 404
    submitted = client.simulate_post(f"{V1}/pricing-quotes/{theirs['id']}/approval", headers=org.admin.headers)
    assert submitted.status_code == 404
    assert recall(client, org.admin, theirs["id"]).status_code == 404
    assert client.simulate_get(APPROVALS, headers=org.admin.headers).json["approvals"] == []
    assert client.simulate_get(f"{APPROVALS}/not-a-uuid", headers=org.admin.headers).status_code == 404
