"""Products: the list (the service's hot path), reads of current and pinned versions, create, and
partial update that makes a new immutable version.

Visibility: keys holding ``products:cost`` (admin) see inactive products and the ``cost`` field;
every other key sees active products only, never cost. Reads select columns with Core into
``ProductView`` tuples, so the list is one indexed keyset query and little per-row work (JSON
fields passed through unparsed). Cross-field rules and scope checks run before any write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

import orjson
from sqlalchemy import ColumnElement, Select, Text, bindparam, cast, create_mock_engine, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.db import Transactions
from dps_common.errors import (
    Conflict,
    MissingScope,
    invalid_fields,
    not_found,
)
from dps_common.keyset import resume_after
from dps_common.paging import PageRequest

from dps_api.db.models.catalog import Product, ProductVersion
from dps_api.domain.catalog_commands import NewProduct, ProductChanges, check_product, default_frequency
from dps_api.domain.catalog_views import JsonText, ProductView
from dps_api.domain.commands import NOT_SENT, sent
from dps_api.domain.vocabulary import PriceFrequency, PriceModel
from dps_api.services.outbox import Outbox

# the columns of ``ProductView`` after ``id``, in order, shared by Product and ProductVersion
_COLUMNS = (
    "spec_id",
    "version",
    "name",
    "short_name",
    "active",
    "price_model",
    "price_frequency",
    "list_prices",
    "tiers",
    "locked",
    "created_at",
    "updated_at",
)
_JSON_COLUMNS = frozenset({"list_prices", "tiers", "cost"})
_PRICE_MODELS = {model.value: model for model in PriceModel}  # a dict lookup: cheaper than PriceModel(value)
_PRICE_FREQUENCIES = {frequency.value: frequency for frequency in PriceFrequency}
# attributes a command may change, and the ones a version consists of
_UPDATABLE = (
    "name",
    "short_name",
    "active",
    "price_model",
    "price_frequency",
    "list_prices",
    "tiers",
    "locked",
    "cost",
)
_SNAPSHOT = ("organization_id", "spec_id") + _UPDATABLE + ("created_at",)


def sees_everything(principal: Principal) -> bool:
    """Admin keys: inactive products and cost data."""
    return principal.has(Scope.PRODUCTS_COST)


def _select(table: type[Product] | type[ProductVersion], with_cost: bool) -> Select[Any]:
    """The columns of ``ProductView``; JSONB ones come back as their JSON text (see ``_views``)."""
    id_column = Product.id if table is Product else ProductVersion.product_id
    attrs = _COLUMNS + (("cost",) if with_cost else ())
    columns: list[ColumnElement[Any]] = [
        cast(getattr(table, a), Text) if a in _JSON_COLUMNS else getattr(table, a) for a in attrs
    ]
    return select(id_column, *columns)


def _view(product: Product) -> ProductView:
    """The view of an ORM product after a write (with cost: only keys that may write see writes)."""
    return ProductView(
        product.id,
        product.spec_id,
        product.version,
        product.name,
        product.short_name,
        product.active,
        PriceModel(product.price_model),
        PriceFrequency(product.price_frequency),
        _json(product.list_prices),
        _json(product.tiers),
        product.locked,
        product.created_at,
        product.updated_at,
        _json(product.cost),
    )


def _json(value: Mapping[str, Any]) -> JsonText:
    return JsonText(orjson.dumps(value).decode())


@lru_cache(maxsize=None)
def _list_sql(everything: bool, active: bool | None, resumes: bool) -> str:
    """The list query as SQL for the driver, compiled once per shape: the hot path skips statement
    building and the ORM session, which cost more than running the query."""
    stmt = _select(Product, everything).where(Product.organization_id == bindparam("organization_id"))
    if not everything:
        stmt = stmt.where(Product.active.is_(True))
    if active is not None:
        stmt = stmt.where(Product.active.is_(active))
    if resumes:
        stmt = stmt.where(Product.id > bindparam("after"))
    dialect = create_mock_engine("postgresql+psycopg://", executor=None).dialect
    return str(stmt.order_by(Product.id).limit(bindparam("limit")).compile(dialect=dialect))


def _views(rows: Iterable[Sequence[Any]], with_cost: bool) -> list[ProductView]:
    """Rows of ``_select``'s columns as views, the JSONB columns as text. The list's hot path: the
    tuples are made with ``tuple.__new__``, skipping the named tuple's own ``__new__`` (a Python
    function taking keywords) for each row."""
    models, frequencies, make = _PRICE_MODELS, _PRICE_FREQUENCIES, tuple.__new__
    return [
        make(
            ProductView,
            (r[0], r[1], r[2], r[3], r[4], r[5], models[r[6]], frequencies[r[7]], r[8], r[9], r[10], r[11], r[12],
             r[13] if with_cost else None),
        )
        for r in rows
    ]


def missing_scope(principal: Principal, scope: Scope, action: str) -> MissingScope:
    return MissingScope(principal.role, scope, action)


class CatalogService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._now = now
        self._outbox = outbox

    def list_products(self, principal: Principal, page: PageRequest, active: bool | None) -> list[ProductView]:
        """``limit + 1`` products after the page's position, id ascending."""
        everything = sees_everything(principal)
        after = resume_after(page, [UUID])
        params: dict[str, Any] = {"organization_id": principal.organization_id, "limit": page.limit + 1}
        if after is not None:
            params["after"] = after[0]
        with self._tx.read_cursor() as cursor:
            cursor.execute(_list_sql(everything, active, after is not None), params)
            return _views(cursor.fetchall(), everything)

    def get_product(self, principal: Principal, product_id: UUID) -> ProductView:
        everything = sees_everything(principal)
        stmt = _select(Product, everything).where(
            Product.id == product_id, Product.organization_id == principal.organization_id
        )
        if not everything:
            stmt = stmt.where(Product.active.is_(True))
        with self._tx.read() as session:
            views = _views(session.execute(stmt), everything)
        if not views:
            raise not_found("Product")
        return views[0]

    def get_product_version(self, principal: Principal, product_id: UUID, version: int) -> ProductView:
        """A pinned version. Non-admin keys see it only while the product and that version are active."""
        everything = sees_everything(principal)
        stmt = _select(ProductVersion, everything).where(
            ProductVersion.product_id == product_id,
            ProductVersion.version == version,
            ProductVersion.organization_id == principal.organization_id,
        )
        if not everything:
            current_active = select(Product.active).where(Product.id == ProductVersion.product_id).scalar_subquery()
            stmt = stmt.where(ProductVersion.active.is_(True), current_active.is_(True))
        with self._tx.read() as session:
            views = _views(session.execute(stmt), everything)
        if not views:
            raise not_found("Product version")
        return views[0]

    def create_product(self, principal: Principal, command: NewProduct) -> ProductView:
        if command.locked and not principal.has(Scope.LOCKED_PRICES_WRITE):
            raise missing_scope(principal, Scope.LOCKED_PRICES_WRITE, "Creating a locked product")
        if command.cost is not None and not principal.has(Scope.PRODUCTS_COST):
            raise missing_scope(principal, Scope.PRODUCTS_COST, "Setting cost data")
        now = self._now()
        state = {
            "organization_id": principal.organization_id,
            "spec_id": command.spec_id,
            "name": command.name,
            "short_name": command.short_name,
            "active": command.active,
            "price_model": command.price_model,
            "price_frequency": command.price_frequency or default_frequency(command.price_model),
            "list_prices": command.list_prices or {},
            "tiers": command.tiers or {},
            "locked": command.locked,
            "cost": command.cost or {},
            "created_at": now,
        }
        check_product(state)
        with self._tx() as session:
            taken = session.scalar(
                select(Product.id).where(
                    Product.organization_id == principal.organization_id, Product.spec_id == command.spec_id
                )
            )
            if taken is not None:
                raise _spec_id_taken(command.spec_id)
            product = Product(**state, version=1, updated_at=now)
            session.add(product)
            try:
                session.flush()
            except IntegrityError:  # a concurrent create won the race for this specId
                raise _spec_id_taken(command.spec_id) from None
            self._save_version(session, product)
            view = _view(product)
            self._outbox.record(session, view, principal.organization_id, now, "product.created")
        return view

    def update_product(self, principal: Principal, product_id: UUID, command: ProductChanges) -> ProductView:
        """Any change makes version + 1 (and a ``product.updated`` event); a command that changes
        nothing returns the product as it is, without a new version."""
        with self._tx() as session:
            product = session.scalar(
                select(Product)
                .where(Product.id == product_id, Product.organization_id == principal.organization_id)
                .with_for_update()
            )
            if product is None:
                raise not_found("Product")
            if command.spec_id is not NOT_SENT and command.spec_id != product.spec_id:
                raise invalid_fields([("specId", "cannot be changed; it identifies the product across versions")])
            changes = self._changes(product, command)
            self._check_scopes(principal, product, changes)
            check_product({attr: changes.get(attr, getattr(product, attr)) for attr in _SNAPSHOT})
            if not changes:
                return _view(product)
            now = self._now()
            for attr, value in changes.items():
                setattr(product, attr, value)
            product.version += 1
            product.updated_at = now
            session.flush()
            self._save_version(session, product)
            view = _view(product)
            self._outbox.record(session, view, principal.organization_id, now, "product.updated")
        return view

    @staticmethod
    def _changes(product: Product, command: ProductChanges) -> dict[str, Any]:
        """attribute -> new value, for the sent fields that differ, with the values a new price
        model implies (tiers dropped when leaving TIERED, the frequency it needs) unless sent."""
        fields = sent(command)
        fields.pop("spec_id", None)
        changes = {}
        for attr, value in fields.items():
            if value is None and attr in ("tiers", "cost"):
                value = {}
            if value != getattr(product, attr):
                changes[attr] = value
        model = changes.get("price_model")
        if model is not None:
            if model != PriceModel.TIERED and "tiers" not in fields:
                changes["tiers"] = {}
            frequency_ok = (product.price_frequency == PriceFrequency.ONE_TIME) == (model == PriceModel.ONE_TIME_FEE)
            if "price_frequency" not in fields and not frequency_ok:
                changes["price_frequency"] = default_frequency(model)
        return {attr: value for attr, value in changes.items() if value != getattr(product, attr)}

    @staticmethod
    def _check_scopes(principal: Principal, product: Product, changes: dict[str, Any]) -> None:
        """Locked prices: changing ``locked``, or the prices of a locked product, needs its own scope."""
        prices_changed = "list_prices" in changes or "tiers" in changes
        if ("locked" in changes or (product.locked and prices_changed)) and not principal.has(
            Scope.LOCKED_PRICES_WRITE
        ):
            raise missing_scope(principal, Scope.LOCKED_PRICES_WRITE, "Changing locked prices")
        if "cost" in changes and not principal.has(Scope.PRODUCTS_COST):
            raise missing_scope(principal, Scope.PRODUCTS_COST, "Changing cost data")

    @staticmethod
    def _save_version(session: Session, product: Product) -> None:
        snapshot = {attr: getattr(product, attr) for attr in _SNAPSHOT}
        session.add(
            ProductVersion(product_id=product.id, version=product.version, updated_at=product.updated_at, **snapshot)
        )


def _spec_id_taken(spec_id: str) -> Conflict:
    return Conflict(f"A product with specId {spec_id} already exists in this organization.", code="spec_id_taken")
