"""``/deal-groups`` through build_http: the bounded lookup, roles, validation, scoping, events."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, insert, select

from dps_api.db.models.opportunities import DealGroup, DealGroupMember
from dps_api.db.models.outbox import OutboxEvent
from dps_api.domain.limits import MAX_GROUPS_PER_OPPORTUNITY, MAX_OPPORTUNITIES_PER_GROUP

BASE = "/external/v1/deal-groups"


def opportunity(client, member, name="Deal"):
    resp = client.simulate_post(
        "/external/v1/opportunities", json={"name": name, "accountName": "Initech"}, headers=member.headers
    )
    assert resp.status_code == 201, resp.json
    return resp.json["id"]


def create_group(client, member, opportunity_ids, **fields):
    body = {"name": "Enterprise bundle", "opportunityIds": opportunity_ids, **fields}
    resp = client.simulate_post(BASE, json=body, headers=member.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def lookup(client, member, opportunity_id):
    return client.simulate_get(BASE, query_string=f"opportunityId={opportunity_id}", headers=member.headers)


def events(tx, event_type):
    with tx() as session:
        rows = session.scalars(
            select(OutboxEvent).where(OutboxEvent.event_type == event_type).order_by(OutboxEvent.id)
        )
        return [row.envelope for row in rows]


def count_groups(tx):
    with tx() as session:
        return session.scalar(select(func.count()).select_from(DealGroup))


def error_fields(resp):
    return [e["field"] for e in resp.json.get("errors", [])]


def test_admin_creates_a_group_and_the_event_carries_its_snapshot(client, org, tx):
    b, a = opportunity(client, org.admin, "B"), opportunity(client, org.admin, "A")
    resp = client.simulate_post(
        BASE,
        json={"name": "Q3 bundle", "description": "Renewals", "opportunityIds": [a, b], "extra": True},
        headers=org.admin.headers,
    )
    assert resp.status_code == 201
    group = resp.json
    assert (group["name"], group["description"]) == ("Q3 bundle", "Renewals")
    assert group["opportunityIds"] == sorted([a, b])
    assert group["createdAt"] == group["updatedAt"]
    [event] = events(tx, "deal_group.created")
    assert event["organizationId"] == str(org.id)
    assert event["data"] == group
    read = client.simulate_get(f"{BASE}/{group['id']}", headers=org.viewer.headers)
    assert read.status_code == 200
    assert read.json == group


def test_an_empty_group_is_allowed(client, org):
    group = create_group(client, org.admin, [], description=None)
    assert (group["opportunityIds"], group["description"]) == ([], None)


def test_lookup_returns_the_groups_an_opportunity_belongs_to_in_id_order(client, org):
    a, b, alone = (opportunity(client, org.admin) for _ in range(3))
    first = create_group(client, org.admin, [a, b], name="First")
    second = create_group(client, org.admin, [a], name="Second")
    create_group(client, org.admin, [b], name="Third")
    resp = lookup(client, org.viewer, a)
    assert resp.status_code == 200
    assert resp.json == {"dealGroups": [first, second]}
    assert "nextCursor" not in resp.json
    assert lookup(client, org.user, alone).json == {"dealGroups": []}


@pytest.mark.parametrize("query", ["", "opportunityId=", "opportunityId=abc", "opportunityid=" + str(uuid.UUID(int=1))])
def test_lookup_needs_a_uuid_opportunity_id(client, org, query):
    resp = client.simulate_get(BASE, query_string=query, headers=org.viewer.headers)
    assert resp.status_code == 400
    assert error_fields(resp) == ["opportunityId"]


def test_lookup_of_an_unknown_or_foreign_opportunity_is_404(client, org, other_org):
    theirs = opportunity(client, other_org.admin)
    create_group(client, other_org.admin, [theirs], name="Their secret group")
    for opportunity_id in (theirs, str(uuid.uuid4())):
        resp = lookup(client, org.admin, opportunity_id)
        assert resp.status_code == 404
        assert resp.json["detail"] == "Opportunity not found."
        assert "secret" not in resp.text
    assert len(lookup(client, other_org.viewer, theirs).json["dealGroups"]) == 1


def test_another_organizations_group_is_404(client, org, other_org, tx):
    theirs = create_group(client, other_org.admin, [opportunity(client, other_org.admin)])
    path = f"{BASE}/{theirs['id']}"
    assert client.simulate_get(path, headers=org.admin.headers).status_code == 404
    assert client.simulate_patch(path, json={"name": "Mine"}, headers=org.admin.headers).status_code == 404
    for raw in (str(uuid.uuid4()), "nope"):
        assert client.simulate_get(f"{BASE}/{raw}", headers=org.admin.headers).status_code == 404
    assert events(tx, "deal_group.updated") == []


def test_view_only_and_user_keys_read_but_cannot_change_groups(client, org):
    opp = opportunity(client, org.admin)
    group = create_group(client, org.admin, [opp])
    for member in (org.viewer, org.user):
        assert client.simulate_get(f"{BASE}/{group['id']}", headers=member.headers).status_code == 200
        assert lookup(client, member, opp).status_code == 200
        for resp in (
            client.simulate_post(BASE, json={"name": "G", "opportunityIds": [opp]}, headers=member.headers),
            client.simulate_patch(f"{BASE}/{group['id']}", json={"name": "G"}, headers=member.headers),
        ):
            assert resp.status_code == 403
            assert resp.json["requiredScope"] == "deal-groups:write"


def test_another_organizations_opportunity_cannot_join_a_group(client, org, other_org, tx):
    mine, theirs = opportunity(client, org.admin), opportunity(client, other_org.admin)
    resp = client.simulate_post(BASE, json={"name": "G", "opportunityIds": [mine, theirs]}, headers=org.admin.headers)
    assert resp.status_code == 400
    assert error_fields(resp) == ["opportunityIds"]
    assert theirs in resp.json["detail"] and mine not in resp.json["detail"]
    assert count_groups(tx) == 0
    assert events(tx, "deal_group.created") == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"opportunityIds": []}, "name"),
        ({"name": "", "opportunityIds": []}, "name"),
        ({"name": 5}, "name"),
        ({"name": "G", "description": 5}, "description"),
        ({"name": "G", "description": "d" * 2001}, "description"),
        ({"name": "G", "opportunityIds": "abc"}, "opportunityIds"),
        ({"name": "G", "opportunityIds": ["abc"]}, "opportunityIds[0]"),
        ({"name": "G", "opportunityIds": [str(uuid.uuid4())]}, "opportunityIds"),
        ({"name": "G", "opportunityIds": [str(uuid.uuid4())] * (MAX_OPPORTUNITIES_PER_GROUP + 1)}, "opportunityIds"),
    ],
)
def test_invalid_group_bodies_give_400_naming_the_field(client, org, tx, body, field):
    resp = client.simulate_post(BASE, json=body, headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert error_fields(resp) == [field]
    assert count_groups(tx) == 0


def test_repeated_opportunity_ids_are_400(client, org):
    opp = opportunity(client, org.admin)
    resp = client.simulate_post(BASE, json={"name": "G", "opportunityIds": [opp, opp]}, headers=org.admin.headers)
    assert resp.status_code == 400
    assert error_fields(resp) == ["opportunityIds"]


def test_patch_renames_and_replaces_the_membership(client, org, tx):
    a, b, c = (opportunity(client, org.admin) for _ in range(3))
    group = create_group(client, org.admin, [a, b], description="old")
    resp = client.simulate_patch(
        f"{BASE}/{group['id']}", json={"name": "Renamed", "opportunityIds": [c, b]}, headers=org.admin.headers
    )
    assert resp.status_code == 200
    updated = resp.json
    assert (updated["name"], updated["description"]) == ("Renamed", "old")
    assert updated["opportunityIds"] == sorted([b, c])
    assert updated["createdAt"] == group["createdAt"]
    [event] = events(tx, "deal_group.updated")
    assert event["data"] == updated
    assert lookup(client, org.viewer, a).json == {"dealGroups": []}
    assert lookup(client, org.viewer, c).json == {"dealGroups": [updated]}
    assert client.simulate_get(f"{BASE}/{group['id']}", headers=org.viewer.headers).json == updated

    cleared = client.simulate_patch(
        f"{BASE}/{group['id']}", json={"description": None, "opportunityIds": []}, headers=org.admin.headers
    )
    assert (cleared.json["description"], cleared.json["opportunityIds"]) == (None, [])
    assert len(events(tx, "deal_group.updated")) == 2


def test_patch_without_changes_writes_no_event(client, org, tx):
    opp = opportunity(client, org.admin)
    group = create_group(client, org.admin, [opp])
    resp = client.simulate_patch(
        f"{BASE}/{group['id']}", json={"name": group["name"], "opportunityIds": [opp]}, headers=org.admin.headers
    )
    assert resp.json == group
    assert events(tx, "deal_group.updated") == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": None}, "name"),
        ({"opportunityIds": None}, "opportunityIds"),
        ({"opportunityIds": [1]}, "opportunityIds[0]"),
    ],
)
def test_patch_validation_names_the_field(client, org, body, field):
    group = create_group(client, org.admin, [])
    resp = client.simulate_patch(f"{BASE}/{group['id']}", json=body, headers=org.admin.headers)
    assert resp.status_code == 400
    assert error_fields(resp) == [field]


def test_patch_with_a_foreign_opportunity_is_400_and_changes_nothing(client, org, other_org, tx):
    mine = opportunity(client, org.admin)
    group = create_group(client, org.admin, [mine])
    theirs = opportunity(client, other_org.admin)
    resp = client.simulate_patch(
        f"{BASE}/{group['id']}", json={"name": "X", "opportunityIds": [theirs]}, headers=org.admin.headers
    )
    assert resp.status_code == 400
    assert error_fields(resp) == ["opportunityIds"]
    assert client.simulate_get(f"{BASE}/{group['id']}", headers=org.admin.headers).json == group
    assert events(tx, "deal_group.updated") == []


def test_an_opportunity_belongs_to_a_bounded_number_of_groups(client, org, tx):
    full, other = opportunity(client, org.admin), opportunity(client, org.admin)
    now = datetime.now(UTC)
    with tx() as session:  # fill up to the cap directly: a hundred POSTs would only slow the suite
        ids = session.scalars(
            insert(DealGroup).returning(DealGroup.id),
            [
                {"organization_id": org.id, "name": f"G{i}", "created_at": now, "updated_at": now}
                for i in range(MAX_GROUPS_PER_OPPORTUNITY)
            ],
        ).all()
        session.execute(insert(DealGroupMember), [{"deal_group_id": i, "opportunity_id": full} for i in ids])
    assert len(lookup(client, org.viewer, full).json["dealGroups"]) == MAX_GROUPS_PER_OPPORTUNITY

    body = {"name": "One more", "opportunityIds": [other, full]}
    resp = client.simulate_post(BASE, json=body, headers=org.admin.headers)
    assert resp.status_code == 409
    assert resp.json["code"] == "deal_group_limit_reached"
    assert full in resp.json["detail"]
    group = create_group(client, org.admin, [other])
    path = f"{BASE}/{group['id']}"
    resp = client.simulate_patch(path, json={"opportunityIds": [other, full]}, headers=org.admin.headers)
    assert resp.status_code == 409
    assert client.simulate_get(path, headers=org.admin.headers).json["opportunityIds"] == [other]
    # a group the opportunity is already in can still be edited
    renamed = client.simulate_patch(f"{BASE}/{ids[0]}", json={"name": "Renamed"}, headers=org.admin.headers)
    assert renamed.status_code == 200
    assert renamed.json["opportunityIds"] == [full]
