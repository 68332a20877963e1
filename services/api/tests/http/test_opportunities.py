"""``/opportunities`` through build_http: roles, validation, organization scoping, paging, events."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select

from dps_api.db.models.opportunities import Opportunity
from dps_api.db.models.outbox import OutboxEvent

BASE = "/external/v1/opportunities"


def create(client, member, **fields):
    body = {"name": "Big deal", "accountName": "Initech", **fields}
    resp = client.simulate_post(BASE, json=body, headers=member.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def events(tx, event_type):
    with tx() as session:
        rows = session.scalars(
            select(OutboxEvent).where(OutboxEvent.event_type == event_type).order_by(OutboxEvent.id)
        )
        return [row.envelope for row in rows]


def count_opportunities(tx):
    with tx() as session:
        return session.scalar(select(func.count()).select_from(Opportunity))


def error_fields(resp):
    return [e["field"] for e in resp.json.get("errors", [])]


# --- create and read ---------------------------------------------------------------------------


def test_admin_creates_an_opportunity_owned_by_the_key_user_and_an_event_is_written(client, org, tx):
    resp = client.simulate_post(
        BASE,
        json={
            "crmId": "006A1",
            "name": "Renewal 2026",
            "accountName": "Initech",
            "amount": "1234.5",
            "currency": "USD",
            "closeDate": "2026-03-31",
            "organizationId": str(uuid.uuid4()),  # unknown fields are dropped
        },
        headers=org.admin.headers,
    )
    assert resp.status_code == 201
    opp = resp.json
    assert opp["crmId"] == "006A1"
    assert opp["ownerUserId"] == str(org.admin.user_id)
    assert opp["stage"] == "PROSPECTING"
    assert opp["amount"] == "1234.50"  # the currency's minor units
    assert opp["closeDate"] == "2026-03-31"
    assert opp["closedWonAt"] is None
    assert opp["createdAt"] == opp["updatedAt"]
    [event] = events(tx, "opportunity.created")
    assert event["organizationId"] == str(org.id)
    assert event["data"] == opp

    read = client.simulate_get(f"{BASE}/{opp['id']}", headers=org.viewer.headers)
    assert read.status_code == 200
    assert read.json == opp


def test_admin_creates_with_another_owner_and_a_currency_without_amount(client, org):
    opp = create(client, org.admin, ownerUserId=str(org.viewer.user_id), stage="NEGOTIATION", currency="EUR")
    assert opp["ownerUserId"] == str(org.viewer.user_id)
    assert opp["stage"] == "NEGOTIATION"
    assert (opp["crmId"], opp["amount"], opp["currency"], opp["closeDate"]) == (None, None, "EUR", None)


@pytest.mark.parametrize(
    ("amount", "currency", "rendered"),
    [("1500", "JPY", "1500"), ("1.234", "KWD", "1.234"), ("100.0", "JPY", "100"), ("-0", "EUR", "0.00")],
)
def test_amounts_follow_the_currency_minor_units(client, org, amount, currency, rendered):
    opp = create(client, org.admin, amount=amount, currency=currency)
    assert opp["amount"] == rendered
    assert client.simulate_get(f"{BASE}/{opp['id']}", headers=org.user.headers).json["amount"] == rendered


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"stage": "WON"}, "stage"),
        ({"stage": None}, "stage"),
        ({"closeDate": "2026-02-30"}, "closeDate"),
        ({"closeDate": 20260101}, "closeDate"),
        ({"name": 123}, "name"),
        ({"name": ""}, "name"),
        ({"name": None}, "name"),
        ({"accountName": ["x"]}, "accountName"),
        ({"amount": 12.5, "currency": "USD"}, "amount"),
        ({"amount": "12,50", "currency": "USD"}, "amount"),
        ({"amount": "12.345", "currency": "USD"}, "amount"),
        ({"amount": "100.5", "currency": "JPY"}, "amount"),
        ({"amount": "-1.00", "currency": "USD"}, "amount"),
        ({"amount": "10.00"}, "currency"),
        ({"currency": "usd"}, "currency"),
        ({"currency": "ABC"}, "currency"),
        ({"currency": "XXX"}, "currency"),
        ({"ownerUserId": "not-a-uuid"}, "ownerUserId"),
        ({"ownerUserId": str(uuid.uuid4())}, "ownerUserId"),
        ({"crmId": 6}, "crmId"),
        ({"crmId": "x" * 101}, "crmId"),
    ],
)
def test_invalid_fields_give_400_naming_the_field_and_write_nothing(client, org, tx, fields, field):
    body = {"name": "Deal", "accountName": "Initech", **fields}
    resp = client.simulate_post(BASE, json=body, headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert error_fields(resp) == [field]
    assert count_opportunities(tx) == 0
    assert events(tx, "opportunity.created") == []


def test_missing_required_fields_are_named(client, org):
    resp = client.simulate_post(BASE, json={}, headers=org.admin.headers)
    assert resp.status_code == 400
    assert sorted(error_fields(resp)) == ["accountName", "name"]


def test_owner_must_be_a_user_of_the_same_organization(client, org, other_org):
    resp = client.simulate_post(
        BASE,
        json={"name": "Deal", "accountName": "Initech", "ownerUserId": str(other_org.user.user_id)},
        headers=org.admin.headers,
    )
    assert resp.status_code == 400
    assert error_fields(resp) == ["ownerUserId"]


def test_crm_id_is_unique_within_an_organization_only(client, org, other_org):
    create(client, org.admin, crmId="006X")
    resp = client.simulate_post(
        BASE, json={"name": "Dup", "accountName": "A", "crmId": "006X"}, headers=org.admin.headers
    )
    assert resp.status_code == 409
    assert resp.json["code"] == "crm_id_taken"
    assert create(client, other_org.admin, crmId="006X")["crmId"] == "006X"


def test_creating_closed_won_directly_is_refused(client, org):
    resp = client.simulate_post(
        BASE, json={"name": "Deal", "accountName": "A", "stage": "CLOSED_WON"}, headers=org.admin.headers
    )
    assert resp.status_code == 409
    assert resp.json["code"] == "use_closed_won_action"
    assert create(client, org.admin, stage="CLOSED_LOST")["stage"] == "CLOSED_LOST"


# --- roles and organization scoping --------------------------------------------------------------


def test_view_only_key_reads_but_cannot_write(client, org):
    opp = create(client, org.admin)
    assert client.simulate_get(BASE, headers=org.viewer.headers).status_code == 200
    assert client.simulate_get(f"{BASE}/{opp['id']}", headers=org.viewer.headers).status_code == 200
    attempts = [
        client.simulate_post(BASE, json={"name": "D", "accountName": "A"}, headers=org.viewer.headers),
        client.simulate_patch(f"{BASE}/{opp['id']}", json={"name": "X"}, headers=org.viewer.headers),
        client.simulate_post(f"{BASE}/{opp['id']}/closed-won", headers=org.viewer.headers),
    ]
    for resp in attempts:
        assert resp.status_code == 403
        assert resp.json["code"] == "missing_scope"


def test_user_key_updates_but_cannot_create_an_opportunity(client, org, tx):
    """Spec section 5: a user updates opportunities; creating one is not in the user role (admin only)."""
    opp = create(client, org.admin, ownerUserId=str(org.user.user_id))
    before = count_opportunities(tx)
    resp = client.simulate_post(BASE, json={"name": "D", "accountName": "A"}, headers=org.user.headers)
    assert resp.status_code == 403
    assert resp.json["code"] == "missing_scope"
    assert resp.json["requiredScope"] == "opportunities:create"
    assert count_opportunities(tx) == before
    assert client.simulate_patch(f"{BASE}/{opp['id']}", json={"name": "X"}, headers=org.user.headers).status_code == 200


def test_user_key_cannot_mark_closed_won(client, org):
    opp = create(client, org.admin)
    resp = client.simulate_post(f"{BASE}/{opp['id']}/closed-won", headers=org.user.headers)
    assert resp.status_code == 403
    assert resp.json["requiredScope"] == "crm:push"


def test_another_organizations_opportunity_is_404_everywhere(client, org, other_org, tx):
    theirs = create(client, other_org.admin, name="Secret deal")
    path = f"{BASE}/{theirs['id']}"
    for resp in (
        client.simulate_get(path, headers=org.admin.headers),
        client.simulate_patch(path, json={"name": "Mine now"}, headers=org.admin.headers),
        client.simulate_post(f"{path}/closed-won", headers=org.admin.headers),
    ):
        assert resp.status_code == 404
        assert "Secret deal" not in resp.text
    assert client.simulate_get(BASE, headers=org.admin.headers).json["opportunities"] == []
    assert client.simulate_get(path, headers=other_org.viewer.headers).json == theirs
    assert events(tx, "opportunity.updated") == []


def test_unknown_and_malformed_ids_are_404(client, org):
    for raw in (str(uuid.uuid4()), "nope"):
        assert client.simulate_get(f"{BASE}/{raw}", headers=org.user.headers).status_code == 404
        assert client.simulate_patch(f"{BASE}/{raw}", json={}, headers=org.user.headers).status_code == 404


# --- partial update --------------------------------------------------------------------------------


def test_patch_changes_only_the_fields_sent_and_writes_an_event(client, org, tx):
    opp = create(client, org.admin, amount="10.50", currency="USD", crmId="006P")
    resp = client.simulate_patch(
        f"{BASE}/{opp['id']}",
        json={"name": "Renamed", "stage": "PROPOSAL", "ownerUserId": str(org.admin.user_id), "closeDate": None},
        headers=org.user.headers,
    )
    assert resp.status_code == 200
    updated = resp.json
    assert (updated["name"], updated["stage"]) == ("Renamed", "PROPOSAL")
    assert updated["ownerUserId"] == str(org.admin.user_id)
    assert (updated["amount"], updated["crmId"], updated["accountName"]) == ("10.50", "006P", "Initech")
    assert updated["updatedAt"] >= opp["updatedAt"]
    assert updated["createdAt"] == opp["createdAt"]
    [event] = events(tx, "opportunity.updated")
    assert event["data"] == updated
    assert client.simulate_get(f"{BASE}/{opp['id']}", headers=org.viewer.headers).json == updated


def test_patch_clears_nullable_fields_and_rechecks_amount_against_currency(client, org):
    opp = create(client, org.admin, amount="10.50", currency="USD", crmId="006C")
    path = f"{BASE}/{opp['id']}"
    resp = client.simulate_patch(path, json={"currency": "JPY"}, headers=org.user.headers)
    assert resp.status_code == 400
    assert error_fields(resp) == ["amount"]
    resp = client.simulate_patch(path, json={"currency": None}, headers=org.user.headers)
    assert error_fields(resp) == ["currency"]
    resp = client.simulate_patch(path, json={"amount": "11", "currency": "JPY"}, headers=org.user.headers)
    assert resp.status_code == 200
    assert (resp.json["amount"], resp.json["currency"]) == ("11", "JPY")
    resp = client.simulate_patch(path, json={"amount": None, "crmId": None}, headers=org.user.headers)
    assert (resp.json["amount"], resp.json["currency"], resp.json["crmId"]) == (None, "JPY", None)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"name": None}, "name"),
        ({"accountName": None}, "accountName"),
        ({"ownerUserId": None}, "ownerUserId"),
        ({"stage": "LOST"}, "stage"),
        ({"closeDate": "tomorrow"}, "closeDate"),
        ({"ownerUserId": str(uuid.uuid4())}, "ownerUserId"),
        ({"amount": "1.001"}, "amount"),
    ],
)
def test_patch_validation_names_the_field_and_changes_nothing(client, org, tx, fields, field):
    opp = create(client, org.admin, amount="1.00", currency="USD")
    resp = client.simulate_patch(f"{BASE}/{opp['id']}", json=fields, headers=org.user.headers)
    assert resp.status_code == 400
    assert error_fields(resp) == [field]
    assert client.simulate_get(f"{BASE}/{opp['id']}", headers=org.user.headers).json == opp
    assert events(tx, "opportunity.updated") == []


def test_patch_without_changes_writes_no_event(client, org, tx):
    opp = create(client, org.admin)
    resp = client.simulate_patch(
        f"{BASE}/{opp['id']}", json={"name": opp["name"], "unknown": 1}, headers=org.user.headers
    )
    assert resp.json == opp
    assert events(tx, "opportunity.updated") == []


def test_patch_to_a_taken_crm_id_is_409(client, org):
    create(client, org.admin, crmId="006T")
    opp = create(client, org.admin)
    resp = client.simulate_patch(f"{BASE}/{opp['id']}", json={"crmId": "006T"}, headers=org.user.headers)
    assert resp.status_code == 409
    assert resp.json["code"] == "crm_id_taken"


def test_stage_closed_won_via_patch_is_409_use_the_action(client, org):
    opp = create(client, org.admin)
    resp = client.simulate_patch(f"{BASE}/{opp['id']}", json={"stage": "CLOSED_WON"}, headers=org.admin.headers)
    assert resp.status_code == 409
    assert resp.json["code"] == "use_closed_won_action"


# --- closed-won ------------------------------------------------------------------------------------


def test_admin_marks_closed_won_once_and_the_crm_push_event_is_written(client, org, tx):
    opp = create(client, org.admin, stage="NEGOTIATION", crmId="006W")
    path = f"{BASE}/{opp['id']}/closed-won"
    resp = client.simulate_post(path, headers=org.admin.headers)
    assert resp.status_code == 200
    won = resp.json
    assert won["stage"] == "CLOSED_WON"
    assert won["closedWonAt"] is not None
    assert won["closedWonAt"] == won["updatedAt"]
    [event] = events(tx, "opportunity.closed_won")
    assert event["data"] == won
    assert event["data"]["crmId"] == "006W"

    again = client.simulate_post(path, headers=org.admin.headers)
    assert again.status_code == 409
    assert again.json["code"] == "already_closed_won"
    assert len(events(tx, "opportunity.closed_won")) == 1


def test_closed_won_reopens_only_with_an_admin_key(client, org):
    opp = create(client, org.admin)
    client.simulate_post(f"{BASE}/{opp['id']}/closed-won", headers=org.admin.headers)
    path = f"{BASE}/{opp['id']}"
    renamed = client.simulate_patch(path, json={"name": "Won deal"}, headers=org.user.headers)
    assert renamed.status_code == 200
    assert renamed.json["stage"] == "CLOSED_WON"
    refused = client.simulate_patch(path, json={"stage": "NEGOTIATION"}, headers=org.user.headers)
    assert refused.status_code == 403
    assert refused.json["code"] == "closed_won_reopen_needs_admin"
    reopened = client.simulate_patch(path, json={"stage": "NEGOTIATION"}, headers=org.admin.headers)
    assert reopened.status_code == 200
    assert (reopened.json["stage"], reopened.json["closedWonAt"]) == ("NEGOTIATION", None)


# --- listing and paging -----------------------------------------------------------------------------


def walk(client, member, query, limit):
    seen, pages, cursor = [], 0, None
    while True:
        params = f"{query}&limit={limit}" + (f"&cursor={cursor}" if cursor else "")
        resp = client.simulate_get(BASE, query_string=params, headers=member.headers)
        assert resp.status_code == 200, resp.json
        assert len(resp.json["opportunities"]) <= limit
        seen += [o["id"] for o in resp.json["opportunities"]]
        pages += 1
        cursor = resp.json["nextCursor"]
        if cursor is None:
            return seen, pages


def test_walk_all_pages_in_id_order(client, org, other_org):
    ids = [create(client, org.admin, name=f"Deal {i}")["id"] for i in range(5)]
    create(client, other_org.admin)
    seen, pages = walk(client, org.viewer, "", 2)
    assert seen == ids
    assert pages == 3
    assert walk(client, org.viewer, "", 5) == (ids, 1)
    first = client.simulate_get(BASE, headers=org.viewer.headers).json
    assert [o["id"] for o in first["opportunities"]] == ids
    assert first["nextCursor"] is None


def test_filters_by_stage_owner_and_crm_id_and_bind_the_cursor(client, org):
    owned_by_user = {"ownerUserId": str(org.user.user_id)}
    proposals = [create(client, org.admin, stage="PROPOSAL", **owned_by_user)["id"] for _ in range(3)]
    create(client, org.admin, stage="PROSPECTING", **owned_by_user)
    admin_owned = create(client, org.admin, stage="PROPOSAL", crmId="006F")["id"]
    assert walk(client, org.user, "stage=PROPOSAL", 1)[0] == proposals + [admin_owned]
    assert walk(client, org.user, f"ownerUserId={org.admin.user_id}", 1)[0] == [admin_owned]
    assert walk(client, org.user, "crmId=006F", 10)[0] == [admin_owned]

    page = client.simulate_get(BASE, query_string="stage=PROPOSAL&limit=1", headers=org.user.headers).json
    foreign = client.simulate_get(
        BASE, query_string=f"stage=PROSPECTING&limit=1&cursor={page['nextCursor']}", headers=org.user.headers
    )
    assert foreign.status_code == 400
    assert foreign.json["code"] == "invalid_cursor"


@pytest.mark.parametrize("query", ["stage=WON", "ownerUserId=123"])
def test_bad_filters_are_400_naming_the_parameter(client, org, query):
    resp = client.simulate_get(BASE, query_string=query, headers=org.user.headers)
    assert resp.status_code == 400
    assert error_fields(resp) == [query.split("=")[0]]


@pytest.mark.parametrize("limit", ["0", "501", "-1", "abc", "2.5"])
def test_limit_outside_1_to_500_is_400(client, org, limit):
    resp = client.simulate_get(BASE, query_string=f"limit={limit}", headers=org.user.headers)
    assert resp.status_code == 400
    assert resp.json["code"] == "invalid_limit"


def test_limit_bounds_are_accepted(client, org):
    for limit in ("1", "500"):
        assert client.simulate_get(BASE, query_string=f"limit={limit}", headers=org.user.headers).status_code == 200


def test_cursor_not_issued_by_the_service_is_400(client, org):
    for _ in range(2):
        create(client, org.admin)
    cursor = client.simulate_get(BASE, query_string="limit=1", headers=org.user.headers).json["nextCursor"]
    assert cursor is not None
    body, _, mac = cursor.partition(".")
    for bad in ("garbage", cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB"), f"W10.{mac}"):
        resp = client.simulate_get(BASE, query_string=f"limit=1&cursor={bad}", headers=org.user.headers)
        assert resp.status_code == 400, bad
        assert resp.json["code"] == "invalid_cursor"
