"""``catalog_lookup`` against real PostgreSQL: what the quotes work relies on when it prices lines."""

from __future__ import annotations

import json
from decimal import Decimal
from uuid import UUID

import pytest

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.errors import Conflict, Forbidden, NotFound, ValidationFailed

from dps_api.adapters.outbox import OUTBOX
from dps_api.domain.catalog_commands import ProductChanges
from dps_api.resources.pricebooks import new_pricebook, pricebook_changes
from dps_api.resources.products import new_product, product_changes
from dps_api.schemas.catalog import PricebookCreate, PricebookUpdate, ProductCreate, ProductUpdate
from dps_api.services.catalog import CatalogService
from dps_api.services.catalog_lookup import PinnedPricebook, pin_pricebook, pinned_pricebook, price_product
from dps_api.services.pricebooks import PricebookService


def principal(org, member, role: Role) -> Principal:
    return Principal(org.id, org.name, member.user_id, role, "test")


@pytest.fixture
def catalog(app):
    return CatalogService(app.context.tx, app.context.now, OUTBOX)


@pytest.fixture
def pricebooks(app):
    return PricebookService(app.context.tx, app.context.now, OUTBOX)


@pytest.fixture
def admin(org):
    return principal(org, org.admin, Role.ADMIN)


@pytest.fixture
def user(org):
    return principal(org, org.user, Role.USER)


def make_product(catalog, admin, **fields) -> UUID:
    body = {"specId": "SEAT", "name": "Seat", "priceModel": "PER_UNIT", "listPrices": {"USD": "100"}, **fields}
    return catalog.create_product(admin, new_product(ProductCreate.model_validate_json(json.dumps(body)))).id


def make_pricebook(pricebooks, admin, **fields) -> UUID:
    body = {"name": "Partner", "currency": "USD", **fields}
    return pricebooks.create_pricebook(admin, new_pricebook(PricebookCreate.model_validate_json(json.dumps(body)))).id


def test_pricebook_entry_beats_the_list_price(tx, catalog, pricebooks, admin, org):
    product_id = make_product(catalog, admin, shortName="S", priceFrequency="ANNUAL", locked=True)
    other_id = make_product(catalog, admin, specId="OTHER")
    book_id = make_pricebook(pricebooks, admin, entries=[{"productId": str(product_id), "unitPrice": "80"}])
    with tx() as session:
        book = pin_pricebook(session, admin, book_id)
        priced = price_product(session, org.id, product_id, "USD", pricebook=book)
        listed = price_product(session, org.id, other_id, "USD", pricebook=book)
        bare = price_product(session, org.id, product_id, "USD", pricebook=None)
    assert book == PinnedPricebook(book_id, 1, "USD")
    assert priced.list_unit_price == Decimal("80.00")
    assert (priced.spec_id, priced.version, priced.name, priced.short_name) == ("SEAT", 1, "Seat", "S")
    assert (priced.price_model, priced.price_frequency, priced.locked, priced.tiers) == ("PER_UNIT", "ANNUAL", True, ())
    assert listed.list_unit_price == Decimal("100.00")
    assert bare.list_unit_price == Decimal("100.00")


def test_a_given_version_prices_as_it_was_and_the_pinned_pricebook_version_too(tx, catalog, pricebooks, admin, org):
    product_id = make_product(catalog, admin)
    book_id = make_pricebook(pricebooks, admin, entries=[{"productId": str(product_id), "unitPrice": "90"}])
    with tx() as session:
        pinned = pin_pricebook(session, admin, book_id)
    changes = product_changes(ProductUpdate.model_validate_json(b'{"listPrices": {"USD": "150"}, "name": "Seat 2"}'))
    catalog.update_product(admin, product_id, changes)
    pricebooks.update_pricebook(admin, book_id, pricebook_changes(PricebookUpdate.model_validate_json(b'{"entries": []}')))
    with tx() as session:
        old = price_product(session, org.id, product_id, "USD", pricebook=None, version=1)
        new = price_product(session, org.id, product_id, "USD", pricebook=None)
        repinned = pinned_pricebook(session, org.id, book_id, 1)
        old_entry = price_product(session, org.id, product_id, "USD", pricebook=repinned, version=1)
        latest = pin_pricebook(session, admin, book_id)
        no_entry = price_product(session, org.id, product_id, "USD", pricebook=latest)
    assert (old.version, old.list_unit_price, old.name) == (1, Decimal("100.00"), "Seat")
    assert (new.version, new.list_unit_price, new.name) == (2, Decimal("150.00"), "Seat 2")
    assert repinned == pinned and old_entry.list_unit_price == Decimal("90.00")
    assert latest.version == 2 and no_entry.list_unit_price == Decimal("150.00")


def test_inactive_product_cannot_be_priced_anew_but_its_pinned_version_can(tx, catalog, admin, org):
    product_id = make_product(catalog, admin)
    catalog.update_product(admin, product_id, ProductChanges(active=False))
    with tx() as session:
        with pytest.raises(ValidationFailed) as raised:
            price_product(session, org.id, product_id, "USD", pricebook=None)
        assert raised.value.code == "product_inactive"
        assert price_product(session, org.id, product_id, "USD", pricebook=None, version=1).version == 1
        with pytest.raises(NotFound):
            price_product(session, org.id, product_id, "USD", pricebook=None, version=3)


def test_no_price_in_the_currency_and_a_pricebook_in_another_currency(tx, catalog, pricebooks, admin, org):
    product_id = make_product(catalog, admin)
    entries = [{"productId": str(product_id), "unitPrice": "70"}]
    eur_book = make_pricebook(pricebooks, admin, currency="EUR", entries=entries)
    with tx() as session:
        with pytest.raises(ValidationFailed) as raised:
            price_product(session, org.id, product_id, "EUR", pricebook=None)
        assert raised.value.code == "no_price_in_currency"
        book = pin_pricebook(session, admin, eur_book)
        assert price_product(session, org.id, product_id, "EUR", pricebook=book).list_unit_price == Decimal("70.00")
        with pytest.raises(ValidationFailed) as raised:
            price_product(session, org.id, product_id, "USD", pricebook=book)
        assert raised.value.code == "pricebook_currency_mismatch"


def test_tiered_products_give_their_tiers_in_the_currency(tx, catalog, admin, org):
    tiers = {
        "USD": [{"upTo": "10", "unitPrice": "9"}, {"upTo": None, "unitPrice": "8"}],
        "JPY": [{"upTo": None, "unitPrice": "900"}],
    }
    product_id = make_product(catalog, admin, priceModel="TIERED", listPrices={"USD": "9", "JPY": "900"}, tiers=tiers)
    with tx() as session:
        usd = price_product(session, org.id, product_id, "USD", pricebook=None)
        jpy = price_product(session, org.id, product_id, "JPY", pricebook=None)
    assert usd.tiers == ((Decimal("10"), Decimal("9.00")), (None, Decimal("8.00")))
    assert jpy.tiers == ((None, Decimal("900")),) and jpy.list_unit_price == Decimal("900")


def test_unknown_and_other_organizations_products_are_not_found(tx, catalog, admin, org, other_org):
    theirs = make_product(catalog, principal(other_org, other_org.admin, Role.ADMIN))
    with tx() as session:
        for version in (None, 1):
            with pytest.raises(NotFound):
                price_product(session, org.id, theirs, "USD", pricebook=None, version=version)
            with pytest.raises(NotFound):
                price_product(session, org.id, UUID(int=7), "USD", pricebook=None, version=version)


def test_pricebook_use_needs_assignment_or_the_any_scope(tx, pricebooks, admin, user, org):
    viewer = principal(org, org.viewer, Role.VIEW_ONLY)
    assigned = make_pricebook(pricebooks, admin, assignedUserIds=[str(org.user.user_id)])
    unassigned = make_pricebook(pricebooks, admin, name="Admins only")
    with tx() as session:
        assert pin_pricebook(session, user, assigned).id == assigned
        assert pin_pricebook(session, admin, unassigned).id == unassigned  # PRICEBOOKS_ANY
        for who, book in ((user, unassigned), (viewer, assigned)):
            with pytest.raises(Forbidden) as raised:
                pin_pricebook(session, who, book)
            assert raised.value.code == "pricebook_not_assigned"


def test_inactive_and_foreign_pricebooks_cannot_be_pinned(tx, pricebooks, admin, user, org, other_org):
    inactive = make_pricebook(pricebooks, admin, active=False, assignedUserIds=[str(org.user.user_id)])
    theirs = make_pricebook(pricebooks, principal(other_org, other_org.admin, Role.ADMIN))
    with tx() as session:
        for who in (admin, user):
            with pytest.raises(Conflict) as raised:
                pin_pricebook(session, who, inactive)
            assert raised.value.code == "pricebook_inactive"
        for book_id in (theirs, UUID(int=9)):
            with pytest.raises(NotFound):
                pin_pricebook(session, admin, book_id)
        with pytest.raises(NotFound):
            pinned_pricebook(session, org.id, theirs, 1)
        with pytest.raises(NotFound):
            pinned_pricebook(session, org.id, inactive, 2)
