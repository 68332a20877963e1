"""``/products`` through build_http: visibility per role, versions, validation, scoping, paging, events."""

from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import func, select

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.errors import Forbidden

from dps_api.adapters.outbox import OUTBOX
from dps_api.db.models.catalog import Product, ProductVersion
from dps_api.db.models.outbox import OutboxEvent
from dps_api.domain.catalog_commands import ProductChanges
from dps_api.resources.products import product_changes
from dps_api.schemas.catalog import ProductList, ProductUpdate
from dps_api.services.catalog import CatalogService

BASE = "/external/v1/products"
PRODUCT_KEYS = {
    "id", "specId", "version", "name", "shortName", "active", "priceModel", "priceFrequency",
    "listPrices", "tiers", "locked", "createdAt", "updatedAt",
}  # fmt: skip


def create(client, org, **fields):
    body = {"specId": f"SKU-{uuid.uuid4().hex[:8]}", "name": "Seat", "priceModel": "PER_UNIT", **fields}
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


def walk(client, url, headers, limit):
    """Every page of a list: (items in order, number of pages)."""
    items, pages, cursor = [], 0, None
    while True:
        params = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        resp = client.simulate_get(url, params=params, headers=headers)
        assert resp.status_code == 200, resp.json
        pages += 1
        assert len(resp.json["products"]) <= limit
        ProductList.model_validate(resp.json)  # the documented response schema
        items += resp.json["products"]
        cursor = resp.json["nextCursor"]
        if cursor is None:
            return items, pages


# --- create and read ---------------------------------------------------------------------------


def test_admin_creates_a_product_at_version_1_with_normalised_prices_and_an_event(client, org, tx):
    resp = client.simulate_post(
        BASE,
        json={
            "specId": "SEAT-PRO",
            "name": "Pro seat",
            "shortName": "Pro",
            "priceModel": "PER_UNIT",
            "priceFrequency": "ANNUAL",
            "listPrices": {"USD": "100", "JPY": "15000", "KWD": "30.5"},
            "cost": {"USD": "40"},
            "organizationId": str(uuid.uuid4()),  # unknown fields are dropped
        },
        headers=org.admin.headers,
    )
    assert resp.status_code == 201, resp.json
    product = resp.json
    assert product["version"] == 1
    assert product["active"] is True and product["locked"] is False
    assert product["listPrices"] == {"USD": "100.00", "JPY": "15000", "KWD": "30.500"}
    assert product["cost"] == {"USD": "40.00"}
    assert product["tiers"] == {}
    assert product["priceFrequency"] == "ANNUAL"
    [event] = events(tx, "product.created")
    assert event["organizationId"] == str(org.id)
    assert event["data"] == product
    assert count_rows(tx, ProductVersion) == 1


def test_price_frequency_defaults_to_monthly_and_one_time_for_one_time_fees(client, org):
    assert create(client, org, priceModel="FLAT")["priceFrequency"] == "MONTHLY"
    assert create(client, org, priceModel="ONE_TIME_FEE")["priceFrequency"] == "ONE_TIME"


def test_tiered_product_keeps_its_tiers(client, org):
    tiers = {"USD": [{"upTo": "10", "unitPrice": "9"}, {"upTo": None, "unitPrice": "8.5"}]}
    product = create(client, org, priceModel="TIERED", listPrices={"USD": "9"}, tiers=tiers)
    assert product["tiers"] == {"USD": [{"upTo": "10", "unitPrice": "9.00"}, {"upTo": None, "unitPrice": "8.50"}]}
    fetched = client.simulate_get(f"{BASE}/{product['id']}", headers=org.viewer.headers).json
    assert fetched["tiers"] == product["tiers"]


@pytest.mark.parametrize("role", ["viewer", "user"])
def test_non_admin_keys_read_active_products_without_cost(client, org, role):
    active = create(client, org, listPrices={"USD": "10"}, cost={"USD": "4"})
    inactive = create(client, org, active=False)
    headers = getattr(org, role).headers
    listed = client.simulate_get(BASE, headers=headers).json
    assert [p["id"] for p in listed["products"]] == [active["id"]]
    assert set(listed["products"][0]) == PRODUCT_KEYS
    one = client.simulate_get(f"{BASE}/{active['id']}", headers=headers)
    assert one.status_code == 200 and "cost" not in one.json
    assert one.json["listPrices"] == {"USD": "10.00"}
    assert client.simulate_get(f"{BASE}/{inactive['id']}", headers=headers).status_code == 404
    assert client.simulate_get(f"{BASE}?active=false", headers=headers).json["products"] == []


def test_admin_keys_see_inactive_products_and_cost(client, org):
    active = create(client, org, cost={"USD": "4"})
    inactive = create(client, org, active=False)
    listed = client.simulate_get(BASE, headers=org.admin.headers).json["products"]
    assert [p["id"] for p in listed] == [active["id"], inactive["id"]]
    assert listed[0]["cost"] == {"USD": "4.00"} and listed[1]["cost"] == {}
    only_inactive = client.simulate_get(f"{BASE}?active=false", headers=org.admin.headers).json["products"]
    assert [p["id"] for p in only_inactive] == [inactive["id"]]
    one = client.simulate_get(f"{BASE}/{inactive['id']}", headers=org.admin.headers)
    assert one.status_code == 200 and one.json["active"] is False and one.json["cost"] == {}


@pytest.mark.parametrize("role", ["viewer", "user"])
def test_non_admin_keys_cannot_create_or_edit_products(client, org, tx, role):
    headers = getattr(org, role).headers
    resp = client.simulate_post(BASE, json={"specId": "X", "name": "X", "priceModel": "FLAT"}, headers=headers)
    assert resp.status_code == 403
    assert resp.json["requiredScope"] == "products:write" and "products:write" in resp.json["detail"]
    product = create(client, org)
    resp = client.simulate_patch(f"{BASE}/{product['id']}", json={"name": "Y"}, headers=headers)
    assert resp.status_code == 403 and resp.json["requiredScope"] == "products:write"
    assert count_rows(tx, Product) == 1


# --- versions ----------------------------------------------------------------------------------


def test_patch_makes_version_2_and_version_1_keeps_the_old_price(client, org, tx):
    product = create(client, org, listPrices={"USD": "100"})
    resp = client.simulate_patch(
        f"{BASE}/{product['id']}", json={"listPrices": {"USD": "120.5"}, "name": "Seat v2"}, headers=org.admin.headers
    )
    assert resp.status_code == 200, resp.json
    assert resp.json["version"] == 2
    assert resp.json["listPrices"] == {"USD": "120.50"} and resp.json["name"] == "Seat v2"
    assert resp.json["specId"] == product["specId"] and resp.json["createdAt"] == product["createdAt"]
    v1 = client.simulate_get(f"{BASE}/{product['id']}/versions/1", headers=org.viewer.headers)
    assert v1.status_code == 200
    assert v1.json["version"] == 1 and v1.json["listPrices"] == {"USD": "100.00"} and v1.json["name"] == "Seat"
    v2 = client.simulate_get(f"{BASE}/{product['id']}/versions/2", headers=org.viewer.headers).json
    assert v2 == {k: v for k, v in resp.json.items() if k != "cost"}
    assert client.simulate_get(f"{BASE}/{product['id']}", headers=org.viewer.headers).json["version"] == 2
    [event] = events(tx, "product.updated")
    assert event["data"] == resp.json and event["data"]["cost"] == {}


def test_patch_that_changes_nothing_makes_no_version(client, org, tx):
    product = create(client, org, listPrices={"USD": "100"})
    resp = client.simulate_patch(
        f"{BASE}/{product['id']}", json={"listPrices": {"USD": "100.00"}, "name": "Seat"}, headers=org.admin.headers
    )
    assert resp.status_code == 200 and resp.json["version"] == 1
    assert events(tx, "product.updated") == []


def test_versions_are_hidden_from_non_admins_when_inactive_and_404_when_unknown(client, org):
    product = create(client, org)
    url = f"{BASE}/{product['id']}/versions"
    client.simulate_patch(f"{BASE}/{product['id']}", json={"active": False}, headers=org.admin.headers)
    assert client.simulate_get(f"{url}/1", headers=org.user.headers).status_code == 404
    assert client.simulate_get(f"{url}/1", headers=org.admin.headers).json["cost"] == {}
    assert client.simulate_get(f"{url}/2", headers=org.admin.headers).json["active"] is False
    for version in ("3", "0", "abc", "-1", "99999999999999"):
        assert client.simulate_get(f"{url}/{version}", headers=org.admin.headers).status_code == 404, version


def test_leaving_tiered_drops_tiers_and_one_time_fee_takes_one_time(client, org):
    tiers = {"USD": [{"upTo": None, "unitPrice": "5"}]}
    product = create(client, org, priceModel="TIERED", listPrices={"USD": "5"}, tiers=tiers)
    url = f"{BASE}/{product['id']}"
    flat = client.simulate_patch(url, json={"priceModel": "FLAT"}, headers=org.admin.headers).json
    assert flat["tiers"] == {} and flat["priceFrequency"] == "MONTHLY" and flat["version"] == 2
    fee = client.simulate_patch(url, json={"priceModel": "ONE_TIME_FEE"}, headers=org.admin.headers).json
    assert fee["priceFrequency"] == "ONE_TIME"
    back = client.simulate_patch(url, json={"priceModel": "PER_UNIT"}, headers=org.admin.headers).json
    assert back["priceFrequency"] == "MONTHLY" and back["version"] == 4


def test_admin_edits_locked_products_and_cost_and_clears_short_name(client, org):
    product = create(client, org, locked=True, shortName="S", listPrices={"USD": "10"})
    resp = client.simulate_patch(
        f"{BASE}/{product['id']}",
        json={"listPrices": {"USD": "11"}, "locked": False, "cost": {"EUR": "2"}, "shortName": None},
        headers=org.admin.headers,
    )
    assert resp.status_code == 200, resp.json
    assert resp.json["locked"] is False and resp.json["cost"] == {"EUR": "2.00"} and resp.json["shortName"] is None


def test_locked_prices_need_their_own_scope_in_the_service(app, client, org):
    """No role holds products:write without locked-prices:write, so the explicit check is exercised
    on the service with a principal lacking it."""
    product = create(client, org, locked=True, listPrices={"USD": "10"})
    service = CatalogService(app.context.tx, app.context.now, OUTBOX)
    user = Principal(org.id, org.name, org.user.user_id, Role.USER, "k")
    for change in ({"listPrices": {"USD": "9"}}, {"locked": False}):
        with pytest.raises(Forbidden) as raised:
            service.update_product(user, uuid.UUID(product["id"]), product_changes(ProductUpdate.model_validate(change)))
        assert raised.value.extra == {"requiredScope": "locked-prices:write"}
    renamed = service.update_product(user, uuid.UUID(product["id"]), ProductChanges(name="Renamed"))
    assert renamed.version == 2 and json.loads(renamed.list_prices) == {"USD": "10.00"}


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"listPrices": {"usd": "1"}}, "listPrices.usd.[key]"),
        ({"listPrices": {"ABC": "1"}}, "listPrices"),
        ({"listPrices": {"XAU": "1"}}, "listPrices"),
        ({"listPrices": {"JPY": "100.5"}}, "listPrices"),
        ({"listPrices": {"USD": "1.001"}}, "listPrices"),
        ({"listPrices": {"USD": "-1"}}, "listPrices"),
        ({"listPrices": {"USD": 100}}, "listPrices.USD"),
        ({"listPrices": {"USD": "1e3"}}, "listPrices.USD"),
        ({"cost": {"JPY": "0.5"}}, "cost"),
        ({"priceModel": "SUBSCRIPTION"}, "priceModel"),
        ({"priceFrequency": "WEEKLY"}, "priceFrequency"),
        ({"active": "true"}, "active"),
        ({"locked": 1}, "locked"),
        ({"name": ""}, "name"),
        ({"specId": "has space"}, "specId"),
        ({"specId": "NUL\u0000"}, "specId"),
        ({"shortName": "nul \u0000"}, "shortName"),
        ({"tiers": {"USD": [{"upTo": None, "unitPrice": "1"}]}}, "tiers"),
        ({"priceModel": "TIERED", "listPrices": {"USD": "1"}}, "tiers"),
        ({"priceModel": "TIERED", "listPrices": {"USD": "1"}, "tiers": {"EUR": [{"unitPrice": "1"}]}}, "tiers"),
        ({"priceModel": "TIERED", "tiers": {"USD": [{"upTo": "5", "unitPrice": "1"}]}}, "tiers"),
        ({"priceModel": "TIERED", "tiers": {"USD": [{"upTo": "5", "unitPrice": "-1"}, {"unitPrice": "1"}]}}, "tiers"),
        ({"priceModel": "TIERED", "tiers": {"JPY": [{"upTo": "5", "unitPrice": "1.5"}, {"unitPrice": "1"}]}}, "tiers"),
        ({"priceModel": "TIERED", "tiers": {"USD": [{"upTo": "5", "unitPrice": "1"}] * 2}}, "tiers"),
        ({"priceModel": "ONE_TIME_FEE", "priceFrequency": "MONTHLY"}, "priceFrequency"),
        ({"priceModel": "FLAT", "priceFrequency": "ONE_TIME"}, "priceFrequency"),
    ],
)
def test_invalid_products_are_400_naming_the_field_and_nothing_is_written(client, org, tx, fields, field):
    body = {"specId": "SKU-1", "name": "Seat", "priceModel": "PER_UNIT", **fields}
    resp = client.simulate_post(BASE, json=body, headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert field in error_fields(resp), resp.json
    assert count_rows(tx, Product) == 0 and events(tx, "product.created") == []


def test_missing_required_fields_are_named(client, org):
    resp = client.simulate_post(BASE, json={}, headers=org.admin.headers)
    assert resp.status_code == 400
    assert {"specId", "name", "priceModel"} <= set(error_fields(resp))


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"specId": "OTHER"}, "specId"),
        ({"name": None}, "name"),
        ({"active": None}, "active"),
        ({"listPrices": {"JPY": "1.5"}}, "listPrices"),
        ({"tiers": {"USD": [{"upTo": None, "unitPrice": "1"}]}}, "tiers"),
        ({"priceFrequency": "ONE_TIME"}, "priceFrequency"),
    ],
)
def test_invalid_patches_are_400_naming_the_field_and_keep_the_version(client, org, tx, fields, field):
    product = create(client, org, listPrices={"USD": "1"})
    resp = client.simulate_patch(f"{BASE}/{product['id']}", json=fields, headers=org.admin.headers)
    assert resp.status_code == 400, resp.json
    assert field in error_fields(resp), resp.json
    assert client.simulate_get(f"{BASE}/{product['id']}", headers=org.admin.headers).json == product
    assert count_rows(tx, ProductVersion) == 1


def test_patching_tiered_prices_must_keep_tier_currencies_in_step(client, org):
    tiers = {"USD": [{"upTo": None, "unitPrice": "5"}]}
    product = create(client, org, priceModel="TIERED", listPrices={"USD": "5"}, tiers=tiers)
    url = f"{BASE}/{product['id']}"
    resp = client.simulate_patch(url, json={"listPrices": {"USD": "5", "EUR": "4"}}, headers=org.admin.headers)
    assert resp.status_code == 400 and error_fields(resp) == ["tiers"]
    both = {"listPrices": {"USD": "5", "EUR": "4"}, "tiers": {**tiers, "EUR": [{"upTo": None, "unitPrice": "4"}]}}
    assert client.simulate_patch(url, json=both, headers=org.admin.headers).json["version"] == 2


def test_spec_id_is_unique_per_organization(client, org, other_org):
    create(client, org, specId="SAME")
    resp = client.simulate_post(
        BASE, json={"specId": "SAME", "name": "Again", "priceModel": "FLAT"}, headers=org.admin.headers
    )
    assert resp.status_code == 409 and resp.json["code"] == "spec_id_taken"
    assert create(client, other_org, specId="SAME")["specId"] == "SAME"


def test_another_organizations_product_is_404(client, org, other_org):
    theirs = create(client, other_org, listPrices={"USD": "1"})
    for url in (f"{BASE}/{theirs['id']}", f"{BASE}/{theirs['id']}/versions/1"):
        resp = client.simulate_get(url, headers=org.admin.headers)
        assert resp.status_code == 404 and "USD" not in resp.text
    resp = client.simulate_patch(f"{BASE}/{theirs['id']}", json={"name": "Mine"}, headers=org.admin.headers)
    assert resp.status_code == 404
    assert client.simulate_get(BASE, headers=org.admin.headers).json["products"] == []
    assert client.simulate_get(f"{BASE}/not-a-uuid", headers=org.admin.headers).status_code == 404


# --- paging ------------------------------------------------------------------------------------


def test_walking_all_pages_returns_every_visible_product_once_in_id_order(client, org, other_org):
    tiered = {"priceModel": "TIERED", "listPrices": {"USD": "2"}, "tiers": {"USD": [{"upTo": None, "unitPrice": "2"}]}}
    made = [create(client, org, active=i % 3 != 0, cost={"USD": "1"}, **(tiered if i == 1 else {})) for i in range(7)]
    create(client, other_org)
    admin_items, admin_pages = walk(client, BASE, org.admin.headers, 2)
    assert [p["id"] for p in admin_items] == [p["id"] for p in made] and admin_pages == 4
    viewer_items, _ = walk(client, BASE, org.viewer.headers, 2)
    assert [p["id"] for p in viewer_items] == [p["id"] for p in made if p["active"]]
    default = client.simulate_get(BASE, headers=org.admin.headers).json
    assert len(default["products"]) == 7 and default["nextCursor"] is None


@pytest.mark.parametrize("limit", ["0", "501", "-1", "ten", "1.5"])
def test_limit_out_of_range_is_400(client, org, limit):
    resp = client.simulate_get(BASE, params={"limit": limit}, headers=org.viewer.headers)
    assert resp.status_code == 400 and resp.json["code"] == "invalid_limit"


def test_limit_500_is_allowed(client, org):
    assert client.simulate_get(BASE, params={"limit": "500"}, headers=org.viewer.headers).status_code == 200


def test_foreign_forged_or_refiltered_cursors_are_400(client, org):
    for _ in range(2):
        create(client, org)
        client.simulate_post(
            "/external/v1/pricebooks", json={"name": "PB", "currency": "USD"}, headers=org.admin.headers
        )
    pricebook_cursor = client.simulate_get(
        "/external/v1/pricebooks", params={"limit": 1}, headers=org.admin.headers
    ).json["nextCursor"]
    product_cursor = client.simulate_get(BASE, params={"limit": 1, "active": "true"}, headers=org.admin.headers).json[
        "nextCursor"
    ]
    assert pricebook_cursor and product_cursor
    for params in (
        {"cursor": pricebook_cursor},
        {"cursor": product_cursor},  # issued for active=true
        {"cursor": "garbage"},
        {"cursor": product_cursor[:-2] + "xx", "active": "true"},
    ):
        resp = client.simulate_get(BASE, params=params, headers=org.admin.headers)
        assert resp.status_code == 400 and resp.json["code"] == "invalid_cursor", params
    resumed = client.simulate_get(BASE, params={"cursor": product_cursor, "active": "true"}, headers=org.admin.headers)
    assert resumed.status_code == 200 and len(resumed.json["products"]) == 1


def test_a_cursor_issued_to_one_organization_is_a_400_for_another(client, org, other_org):
    for _ in range(2):
        create(client, org)
        create(client, other_org)
    cursor = client.simulate_get(BASE, params={"limit": 1}, headers=org.admin.headers).json["nextCursor"]
    assert cursor
    resp = client.simulate_get(BASE, params={"limit": 1, "cursor": cursor}, headers=other_org.admin.headers)
    assert resp.status_code == 400 and resp.json["code"] == "invalid_cursor"
    assert resp.json["detail"] == "The cursor was not issued by this service for this list and its filters."


def test_active_filter_must_be_a_boolean(client, org):
    resp = client.simulate_get(BASE, params={"active": "yes"}, headers=org.admin.headers)
    assert resp.status_code == 400 and error_fields(resp) == ["active"]
