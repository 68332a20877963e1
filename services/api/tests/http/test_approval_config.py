"""Approval configuration through build_http: approval groups, rules and rule groups; the spec's role
table, validation naming the field, organization scoping, paging and events."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from dps_api.db.models.outbox import OutboxEvent

V1 = "/external/v1"
GROUPS, RULES, RULE_GROUPS = f"{V1}/approval-groups", f"{V1}/approval-rules", f"{V1}/approval-rule-groups"


def events(tx, event_type):
    with tx() as session:
        rows = session.scalars(select(OutboxEvent).where(OutboxEvent.event_type == event_type).order_by(OutboxEvent.id))
        return [row.envelope for row in rows]


def error_fields(resp):
    return [e["field"] for e in resp.json.get("errors", [])]


def create_group(client, org, members=None, required=1, name="Deal desk"):
    members = members if members is not None else [org.admin.user_id]
    body = {"name": name, "memberUserIds": [str(m) for m in members], "requiredApprovals": required}
    resp = client.simulate_post(GROUPS, json=body, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def create_rule_group(client, org, name="Managers", position=10):
    resp = client.simulate_post(RULE_GROUPS, json={"name": name, "position": position}, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def create_rule(client, org, group_id, condition=None, **fields):
    body = {
        "name": "Deep discount",
        "condition": condition or {"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": "20"},
        "approvalGroupId": group_id,
        **fields,
    }
    resp = client.simulate_post(RULES, json=body, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


# --- the role table ------------------------------------------------------------------------------


def test_view_only_reads_approval_groups_but_not_rules_or_rule_groups(client, org):
    group = create_group(client, org)
    for member in (org.viewer, org.user):
        assert client.simulate_get(GROUPS, headers=member.headers).status_code == 200
        assert client.simulate_get(f"{GROUPS}/{group['id']}", headers=member.headers).status_code == 200
        for path in (RULES, RULE_GROUPS):
            resp = client.simulate_get(path, headers=member.headers)
            assert resp.status_code == 403
            assert resp.json["requiredScope"] == "approval-rules:read"
    assert client.simulate_get(RULES, headers=org.admin.headers).status_code == 200
    assert client.simulate_get(RULE_GROUPS, headers=org.admin.headers).status_code == 200


def test_only_admin_keys_edit_the_configuration(client, org):
    group = create_group(client, org)
    rule_group = create_rule_group(client, org)
    rule = create_rule(client, org, group["id"])
    attempts = [
        ("POST", GROUPS, {"name": "x", "memberUserIds": [str(org.user.user_id)], "requiredApprovals": 1}),
        ("PATCH", f"{GROUPS}/{group['id']}", {"name": "renamed"}),
        ("POST", RULE_GROUPS, {"name": "x", "position": 1}),
        ("PATCH", f"{RULE_GROUPS}/{rule_group['id']}", {"name": "renamed"}),
        ("DELETE", f"{RULE_GROUPS}/{rule_group['id']}", None),
        ("POST", RULES, {"name": "x", "condition": {"type": "LOCKED_PRICE_BELOW_LIST"}, "approvalGroupId": "x"}),
        ("PATCH", f"{RULES}/{rule['id']}", {"active": False}),
        ("DELETE", f"{RULES}/{rule['id']}", None),
    ]
    for member in (org.user, org.viewer):
        for method, path, body in attempts:
            resp = client.simulate_request(method, path, json=body, headers=member.headers)
            assert resp.status_code == 403, (method, path)
            assert resp.json["requiredScope"] == "approval-config:write"
    assert client.simulate_get(f"{GROUPS}/{group['id']}", headers=org.admin.headers).json["name"] == "Deal desk"


# --- approval groups --------------------------------------------------------------------------


def test_admin_creates_reads_and_updates_an_approval_group_with_events(client, org, tx):
    second = org.member("user", "second@acme.example")
    group = create_group(client, org, [second.user_id, org.user.user_id], required=2)
    assert group["memberUserIds"] == sorted([str(second.user_id), str(org.user.user_id)])
    assert group["requiredApprovals"] == 2
    assert client.simulate_get(f"{GROUPS}/{group['id']}", headers=org.viewer.headers).json == group

    resp = client.simulate_patch(
        f"{GROUPS}/{group['id']}",
        json={"memberUserIds": [str(org.admin.user_id)], "requiredApprovals": 1},
        headers=org.admin.headers,
    )
    assert resp.status_code == 200, resp.json
    assert resp.json["memberUserIds"] == [str(org.admin.user_id)]
    assert resp.json["name"] == "Deal desk"

    created, updated = events(tx, "approval_group.created"), events(tx, "approval_group.updated")
    assert [e["data"]["id"] for e in created] == [group["id"]]
    assert updated[-1]["data"]["memberUserIds"] == [str(org.admin.user_id)]
    assert updated[-1]["organizationId"] == str(org.id)


def test_an_unchanged_patch_writes_no_event(client, org, tx):
    group = create_group(client, org)
    resp = client.simulate_patch(f"{GROUPS}/{group['id']}", json={"name": "Deal desk"}, headers=org.admin.headers)
    assert resp.status_code == 200
    assert events(tx, "approval_group.updated") == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"memberUserIds": [], "requiredApprovals": 1}, "memberUserIds"),
        ({"memberUserIds": ["not-a-uuid"], "requiredApprovals": 1}, "memberUserIds[0]"),
        ({"requiredApprovals": 0}, "requiredApprovals"),
        ({"requiredApprovals": 2}, "requiredApprovals"),  # more than the one member
        ({"requiredApprovals": "1"}, "requiredApprovals"),
        ({"name": ""}, "name"),
        ({"name": "a\x00b"}, "name"),  # PostgreSQL text cannot hold NUL: a 400, never a 500
    ],
)
def test_invalid_approval_groups_are_refused_naming_the_field(client, org, body, field):
    full = {"name": "G", "memberUserIds": [str(org.user.user_id)], "requiredApprovals": 1, **body}
    resp = client.simulate_post(GROUPS, json=full, headers=org.admin.headers)
    assert resp.status_code == 400
    assert field in error_fields(resp)


def test_members_must_be_distinct_users_of_the_organization(client, org, other_org):
    mine, foreign = str(org.user.user_id), str(other_org.user.user_id)
    for members, field in (([mine, foreign], "memberUserIds[1]"), ([mine, mine], "memberUserIds[1]")):
        resp = client.simulate_post(
            GROUPS, json={"name": "G", "memberUserIds": members, "requiredApprovals": 1}, headers=org.admin.headers
        )
        assert resp.status_code == 400
        assert error_fields(resp) == [field]


def test_patching_a_group_keeps_required_approvals_within_its_members(client, org):
    second = org.member("user", "second@acme.example")
    group = create_group(client, org, [org.user.user_id, second.user_id], required=2)
    resp = client.simulate_patch(
        f"{GROUPS}/{group['id']}", json={"memberUserIds": [str(org.user.user_id)]}, headers=org.admin.headers
    )
    assert resp.status_code == 400
    assert error_fields(resp) == ["requiredApprovals"]
    for body, field in (({"name": None}, "name"), ({"requiredApprovals": None}, "requiredApprovals")):
        resp = client.simulate_patch(f"{GROUPS}/{group['id']}", json=body, headers=org.admin.headers)
        assert resp.status_code == 400
        assert field in error_fields(resp)
    assert client.simulate_get(f"{GROUPS}/{group['id']}", headers=org.admin.headers).json == group


# --- approval rules ---------------------------------------------------------------------------


def test_rules_of_every_condition_type_round_trip(client, org, tx):
    group = create_group(client, org)
    conditions = [
        ({"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": "12.50"}, {"threshold": "12.5", "currency": None}),
        ({"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "100000", "currency": "USD"}, {"threshold": "100000.00"}),
        ({"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "5000000", "currency": "JPY"}, {"threshold": "5000000"}),
        ({"type": "TERM_MONTHS_ABOVE", "threshold": "36"}, {"threshold": "36", "currency": None}),
        ({"type": "LOCKED_PRICE_BELOW_LIST"}, {"threshold": None, "currency": None}),
    ]
    for sent, expected in conditions:
        rule = create_rule(client, org, group["id"], sent)
        assert rule["condition"]["type"] == sent["type"]
        for key, value in expected.items():
            assert rule["condition"][key] == value
        assert rule["active"] is True and rule["ruleGroupId"] is None
        assert client.simulate_get(f"{RULES}/{rule['id']}", headers=org.admin.headers).json == rule
    assert len(events(tx, "approval_rule.created")) == len(conditions)


@pytest.mark.parametrize(
    ("condition", "field"),
    [
        ({"type": "MAX_DISCOUNT_PERCENT_ABOVE"}, "condition.threshold"),
        ({"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": "101"}, "condition.threshold"),
        ({"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": 20}, "condition.threshold"),  # numbers are refused
        ({"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "10"}, "condition.currency"),
        ({"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "10.5", "currency": "JPY"}, "condition.threshold"),
        ({"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "10", "currency": "usd"}, "condition.currency"),
        ({"type": "TERM_MONTHS_ABOVE", "threshold": "-1"}, "condition.threshold"),
        ({"type": "LOCKED_PRICE_BELOW_LIST", "threshold": "1"}, "condition.threshold"),
        ({"type": "NOPE", "threshold": "1"}, "condition.type"),
    ],
)
def test_invalid_conditions_are_refused_naming_the_field(client, org, condition, field):
    group = create_group(client, org)
    body = {"name": "r", "condition": condition, "approvalGroupId": group["id"]}
    resp = client.simulate_post(RULES, json=body, headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert field in error_fields(resp)


def test_rules_must_reference_the_organizations_groups(client, org, other_org):
    theirs = create_group(client, other_org)
    their_step = create_rule_group(client, other_org)
    mine = create_group(client, org)
    cases = [
        ({"approvalGroupId": theirs["id"]}, "approvalGroupId"),
        ({"approvalGroupId": str(uuid.uuid4())}, "approvalGroupId"),
        ({"approvalGroupId": mine["id"], "ruleGroupId": their_step["id"]}, "ruleGroupId"),
    ]
    for refs, field in cases:
        body = {"name": "r", "condition": {"type": "LOCKED_PRICE_BELOW_LIST"}, **refs}
        resp = client.simulate_post(RULES, json=body, headers=org.admin.headers)
        assert resp.status_code == 400
        assert error_fields(resp) == [field]


def test_patch_and_delete_a_rule(client, org, tx):
    group, other = create_group(client, org), create_group(client, org, name="Finance")
    step = create_rule_group(client, org)
    rule = create_rule(client, org, group["id"], ruleGroupId=step["id"])
    resp = client.simulate_patch(
        f"{RULES}/{rule['id']}",
        json={
            "condition": {"type": "TERM_MONTHS_ABOVE", "threshold": "24"},
            "approvalGroupId": other["id"],
            "ruleGroupId": None,
            "active": False,
        },
        headers=org.admin.headers,
    )
    assert resp.status_code == 200, resp.json
    assert resp.json["condition"] == {"type": "TERM_MONTHS_ABOVE", "threshold": "24", "currency": None}
    assert (resp.json["approvalGroupId"], resp.json["ruleGroupId"], resp.json["active"]) == (other["id"], None, False)
    assert resp.json["name"] == rule["name"]
    null_active = client.simulate_patch(f"{RULES}/{rule['id']}", json={"active": None}, headers=org.admin.headers)
    assert null_active.status_code == 400 and "active" in error_fields(null_active)

    assert client.simulate_delete(f"{RULES}/{rule['id']}", headers=org.admin.headers).status_code == 204
    assert client.simulate_get(f"{RULES}/{rule['id']}", headers=org.admin.headers).status_code == 404
    assert client.simulate_delete(f"{RULES}/{rule['id']}", headers=org.admin.headers).status_code == 404
    assert [e["data"]["id"] for e in events(tx, "approval_rule.deleted")] == [rule["id"]]
    assert events(tx, "approval_rule.updated")[-1]["data"]["active"] is False


# --- approval rule groups ---------------------------------------------------------------------


def test_rule_groups_list_their_rules_and_refuse_deletion_while_in_use(client, org, tx):
    group = create_group(client, org)
    step = create_rule_group(client, org, "Finance", 20)
    first = create_rule(client, org, group["id"], ruleGroupId=step["id"])
    second = create_rule(client, org, group["id"], ruleGroupId=step["id"])
    read = client.simulate_get(f"{RULE_GROUPS}/{step['id']}", headers=org.admin.headers).json
    assert read["ruleIds"] == [first["id"], second["id"]]
    assert (read["name"], read["position"]) == ("Finance", 20)

    resp = client.simulate_delete(f"{RULE_GROUPS}/{step['id']}", headers=org.admin.headers)
    assert resp.status_code == 409
    assert resp.json["code"] == "rule_group_in_use"
    assert resp.json["ruleIds"] == [first["id"], second["id"]]

    for rule in (first, second):
        client.simulate_patch(f"{RULES}/{rule['id']}", json={"ruleGroupId": None}, headers=org.admin.headers)
    moved = client.simulate_patch(f"{RULE_GROUPS}/{step['id']}", json={"position": 5}, headers=org.admin.headers)
    assert moved.json["position"] == 5 and moved.json["ruleIds"] == []
    assert client.simulate_delete(f"{RULE_GROUPS}/{step['id']}", headers=org.admin.headers).status_code == 204
    assert client.simulate_get(f"{RULE_GROUPS}/{step['id']}", headers=org.admin.headers).status_code == 404
    assert [e["type"] for e in events(tx, "approval_rule_group.deleted")] == ["approval_rule_group.deleted"]
    assert events(tx, "approval_rule_group.updated")[-1]["data"]["position"] == 5


def test_rule_group_positions_and_names_are_validated(client, org):
    cases = (
        ({"name": "x", "position": -1}, "position"),
        ({"name": "x"}, "position"),
        ({"name": "\x00", "position": 1}, "name"),
    )
    for body, field in cases:
        resp = client.simulate_post(RULE_GROUPS, json=body, headers=org.admin.headers)
        assert resp.status_code == 400
        assert field in error_fields(resp)


# --- organization scoping ---------------------------------------------------------------------


def test_another_organizations_configuration_is_not_found(client, org, other_org):
    group = create_group(client, other_org)
    step = create_rule_group(client, other_org)
    rule = create_rule(client, other_org, group["id"])
    for path in (f"{GROUPS}/{group['id']}", f"{RULE_GROUPS}/{step['id']}", f"{RULES}/{rule['id']}"):
        assert client.simulate_get(path, headers=org.admin.headers).status_code == 404
        assert client.simulate_patch(path, json={"name": "mine"}, headers=org.admin.headers).status_code == 404
    for path in (f"{RULE_GROUPS}/{step['id']}", f"{RULES}/{rule['id']}"):
        assert client.simulate_delete(path, headers=org.admin.headers).status_code == 404
    for path, prop in ((GROUPS, "approvalGroups"), (RULES, "approvalRules"), (RULE_GROUPS, "approvalRuleGroups")):
        assert client.simulate_get(path, headers=org.admin.headers).json[prop] == []
    assert client.simulate_get(f"{GROUPS}/not-a-uuid", headers=org.admin.headers).status_code == 404


# --- paging -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "prop"), [(GROUPS, "approvalGroups"), (RULES, "approvalRules"), (RULE_GROUPS, "approvalRuleGroups")]
)
def test_lists_page_in_id_order_with_limit_bounds_and_foreign_cursors(client, app, org, path, prop):
    group = create_group(client, org)
    made = []
    for i in range(5):
        if path == GROUPS:
            made.append(create_group(client, org, name=f"G{i}")["id"])
        elif path == RULES:
            made.append(create_rule(client, org, group["id"], name=f"R{i}")["id"])
        else:
            made.append(create_rule_group(client, org, name=f"S{i}", position=i)["id"])
    expected = ([group["id"]] if path == GROUPS else []) + made

    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        resp = client.simulate_get(path, params=params, headers=org.admin.headers)
        assert resp.status_code == 200
        assert len(resp.json[prop]) <= 2
        seen += [item["id"] for item in resp.json[prop]]
        cursor = resp.json["nextCursor"]
        if cursor is None:
            break
    assert seen == expected
    assert client.simulate_get(path, headers=org.admin.headers).json["nextCursor"] is None

    for limit in ("0", "501", "x"):
        resp = client.simulate_get(path, params={"limit": limit}, headers=org.admin.headers)
        assert resp.status_code == 400
        assert resp.json["code"] == "invalid_limit"
    assert client.simulate_get(path, params={"limit": "500"}, headers=org.admin.headers).status_code == 200

    # a cursor this service issued for another list, a forged one, and garbage
    foreign = app.context.cursors.encode("/external/v1/opportunities?", [expected[0]])
    forged = foreign.split(".")[0] + ".AAAAAAAAAAAAAAAAAAAAAAAA"
    for bad in (foreign, forged, "garbage"):
        resp = client.simulate_get(path, params={"cursor": bad}, headers=org.admin.headers)
        assert resp.status_code == 400
        assert resp.json["code"] == "invalid_cursor"
