"""``/pricebooks`` through build_http: roles, versions, validation, scoping, paging, events."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import func, select

from dps_api.db.models.catalog import Pricebook, PricebookEntry, PricebookVersion
from dps_api.db.models.outbox import OutboxEvent
from dps_api.schemas.catalog import PricebookList

BASE = "/external/v1/pricebooks"
PRODUCTS = "/external/v1/products"


def product(client, org, **fields):
    body = {"specId": f"SKU-{uuid.uuid4().hex[:8]}", "name": "Seat", "priceModel": "PER_UNIT", **fields}
    resp = client.simulate_post(PRODUCTS, json=body, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json["id"]


def create(client, org, **fields):
    body = {"name": "Partner prices", "currency": "USD", **fields}
    resp = client.simulate_post(BASE, json=body, headers=org.admin.headers)
    assert resp.status_code == 201, resp.json
    return resp.json


def events(tx, event_type):
    with tx() as session:
        rows = session.scalars(
            select(OutboxEvent).where(OutboxEvent.event_type == event_type).order_by(OutboxEvent.id)
        )
        return [row.envelope for row in rows]


def count_rows(tx, model):
    with tx() as session:
        return session.scalar(select(func.count()).select_from(model))


def error_fields(resp):
    return [e["field"] for e in resp.json.get("errors", [])]


def test_admin_creates_a_pricebook_with_entries_and_assigned_users_and_an_event(client, org, tx):
    first, second = product(client, org), product(client, org)
    resp = client.simulate_post(
        BASE,
        json={
            "name": "Partner prices",
            "currency": "USD",
            "assignedUserIds": [str(org.user.user_id), str(org.user.user_id), str(org.viewer.user_id)],
            "entries": [{"productId": second, "unitPrice": "80"}, {"productId": first, "unitPrice": "9.5"}],
        },
        headers=org.admin.headers,
    )
    assert resp.status_code == 201, resp.json
    book = resp.json
    assert book["version"] == 1 and book["active"] is True and book["currency"] == "USD"
    assert sorted(book["assignedUserIds"]) == sorted([str(org.user.user_id), str(org.viewer.user_id)])
    assert sorted((e["productId"], e["unitPrice"]) for e in book["entries"]) == sorted(
        [(second, "80.00"), (first, "9.50")]
    )
    [event] = events(tx, "pricebook.created")
    assert event["data"] == book and event["organizationId"] == str(org.id)
    assert client.simulate_get(f"{BASE}/{book['id']}", headers=org.viewer.headers).json == book


@pytest.mark.parametrize("role", ["viewer", "user"])
def test_non_admin_keys_read_but_cannot_write_pricebooks(client, org, tx, role):
    headers = getattr(org, role).headers
    book = create(client, org, active=False)
    listed = client.simulate_get(BASE, headers=headers)
    assert listed.status_code == 200 and [b["id"] for b in listed.json["pricebooks"]] == [book["id"]]
    assert client.simulate_get(f"{BASE}/{book['id']}", headers=headers).json == book
    resp = client.simulate_post(BASE, json={"name": "Mine", "currency": "USD"}, headers=headers)
    assert resp.status_code == 403 and resp.json["requiredScope"] == "pricebooks:write"
    assert "pricebooks:write" in resp.json["detail"]
    resp = client.simulate_patch(f"{BASE}/{book['id']}", json={"name": "Mine"}, headers=headers)
    assert resp.status_code == 403 and resp.json["requiredScope"] == "pricebooks:write"
    assert count_rows(tx, Pricebook) == 1


def test_patch_makes_a_new_version_and_the_old_entries_stay(client, org, tx):
    first, second = product(client, org), product(client, org)
    book = create(client, org, entries=[{"productId": first, "unitPrice": "10"}])
    url = f"{BASE}/{book['id']}"
    resp = client.simulate_patch(
        url,
        json={"entries": [{"productId": second, "unitPrice": "20"}], "assignedUserIds": [str(org.user.user_id)]},
        headers=org.admin.headers,
    )
    assert resp.status_code == 200, resp.json
    assert resp.json["version"] == 2
    assert resp.json["entries"] == [{"productId": second, "unitPrice": "20.00"}]
    assert resp.json["assignedUserIds"] == [str(org.user.user_id)]
    renamed = client.simulate_patch(url, json={"name": "Renamed", "active": False}, headers=org.admin.headers).json
    assert renamed["version"] == 3 and renamed["entries"] == resp.json["entries"] and renamed["active"] is False
    with tx() as session:
        versions = session.execute(
            select(PricebookEntry.version, PricebookEntry.unit_price).order_by(PricebookEntry.version)
        ).all()
    assert [(v, str(p)) for v, p in versions] == [(1, "10.00"), (2, "20.00"), (3, "20.00")]
    assert [e["data"]["version"] for e in events(tx, "pricebook.updated")] == [2, 3]
    assert events(tx, "pricebook.updated")[-1]["data"] == renamed


def test_patch_that_changes_nothing_makes_no_version(client, org, tx):
    first = product(client, org)
    book = create(client, org, entries=[{"productId": first, "unitPrice": "10"}])
    resp = client.simulate_patch(
        f"{BASE}/{book['id']}",
        json={"name": book["name"], "entries": [{"productId": first, "unitPrice": "10.00"}], "assignedUserIds": []},
        headers=org.admin.headers,
    )
    assert resp.status_code == 200 and resp.json == book
    assert count_rows(tx, PricebookVersion) == 1 and events(tx, "pricebook.updated") == []


def test_changing_currency_revalidates_the_kept_entries(client, org):
    first = product(client, org)
    book = create(client, org, entries=[{"productId": first, "unitPrice": "10.50"}])
    url = f"{BASE}/{book['id']}"
    resp = client.simulate_patch(url, json={"currency": "JPY"}, headers=org.admin.headers)
    assert resp.status_code == 400 and error_fields(resp) == ["currency"]
    both = {"currency": "JPY", "entries": [{"productId": first, "unitPrice": "1500"}]}
    moved = client.simulate_patch(url, json=both, headers=org.admin.headers).json
    assert moved["currency"] == "JPY" and moved["entries"] == [{"productId": first, "unitPrice": "1500"}]
    whole = create(client, org, entries=[{"productId": first, "unitPrice": "10.00"}])
    resp = client.simulate_patch(f"{BASE}/{whole['id']}", json={"currency": "JPY"}, headers=org.admin.headers)
    assert resp.status_code == 200 and resp.json["entries"] == [{"productId": first, "unitPrice": "10"}]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"currency": "usd"}, "currency"),
        ({"currency": "ABC"}, "currency"),
        ({"currency": "XXX"}, "currency"),
        ({"name": ""}, "name"),
        ({"name": "nul \u0000"}, "name"),
        ({"active": "yes"}, "active"),
        ({"assignedUserIds": "all"}, "assignedUserIds"),
        ({"assignedUserIds": ["not-a-uuid"]}, "assignedUserIds[0]"),
        ({"assignedUserIds": [str(uuid.uuid4())]}, "assignedUserIds[0]"),
        ({"entries": [{"productId": str(uuid.uuid4()), "unitPrice": "1"}]}, "entries[0].productId"),
        ({"entries": [{"productId": "PRODUCT", "unitPrice": 1}]}, "entries[0].unitPrice"),
        ({"entries": [{"unitPrice": "1"}]}, "entries[0].productId"),
    ],
)
def test_invalid_pricebooks_are_400_naming_the_field(client, org, tx, fields, field):
    resp = client.simulate_post(BASE, json={"name": "PB", "currency": "USD", **fields}, headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert field in error_fields(resp), resp.json
    assert count_rows(tx, Pricebook) == 0


def test_entry_prices_products_and_duplicates_are_checked(client, org, other_org, tx):
    mine, theirs = product(client, org), product(client, other_org)
    resp = client.simulate_post(
        BASE,
        json={
            "name": "PB",
            "currency": "JPY",
            "entries": [
                {"productId": mine, "unitPrice": "100.5"},
                {"productId": theirs, "unitPrice": "1"},
                {"productId": mine, "unitPrice": "100"},
                {"productId": mine.replace(mine[-4:], "0000"), "unitPrice": "-1"},
            ],
            "assignedUserIds": [str(other_org.user.user_id)],
        },
        headers=org.admin.headers,
    )
    assert resp.status_code == 400
    fields = error_fields(resp)
    expected = {"entries[0].unitPrice", "entries[1].productId", "entries[2].productId", "entries[3].unitPrice"}
    assert expected <= set(fields)
    assert count_rows(tx, Pricebook) == 0
    foreign_user = {"name": "PB", "currency": "JPY", "assignedUserIds": [str(other_org.user.user_id)]}
    users = client.simulate_post(BASE, json=foreign_user, headers=org.admin.headers)
    assert users.status_code == 400 and error_fields(users) == ["assignedUserIds[0]"]


def test_another_organizations_pricebook_is_404(client, org, other_org):
    theirs = create(client, other_org)
    assert client.simulate_get(f"{BASE}/{theirs['id']}", headers=org.admin.headers).status_code == 404
    resp = client.simulate_patch(f"{BASE}/{theirs['id']}", json={"name": "Mine"}, headers=org.admin.headers)
    assert resp.status_code == 404
    assert client.simulate_get(BASE, headers=org.admin.headers).json["pricebooks"] == []
    assert client.simulate_get(f"{BASE}/nope", headers=org.admin.headers).status_code == 404


def test_walking_all_pages_and_limits(client, org):
    entries = [{"productId": product(client, org), "unitPrice": "1"}]
    made = [create(client, org, name=f"PB {i}", active=i != 2, entries=entries)["id"] for i in range(5)]
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = client.simulate_get(BASE, params=params, headers=org.viewer.headers).json
        PricebookList.model_validate(page)  # the documented response schema
        seen += [b["id"] for b in page["pricebooks"]]
        pages += 1
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == made and pages == 3
    inactive = client.simulate_get(BASE, params={"active": "false"}, headers=org.viewer.headers).json
    assert [b["id"] for b in inactive["pricebooks"]] == [made[2]]
    for limit in ("0", "501"):
        resp = client.simulate_get(BASE, params={"limit": limit}, headers=org.viewer.headers)
        assert resp.status_code == 400 and resp.json["code"] == "invalid_limit"


def test_a_products_cursor_is_refused_here(client, org):
    product(client, org), product(client, org)
    cursor = client.simulate_get(PRODUCTS, params={"limit": 1}, headers=org.admin.headers).json["nextCursor"]
    assert cursor
    resp = client.simulate_get(BASE, params={"cursor": cursor}, headers=org.admin.headers)
    assert resp.status_code == 400 and resp.json["code"] == "invalid_cursor"
