"""Products: the list (the service's hot path), reads of current and pinned versions, create, and
partial update that makes a new immutable version.

Visibility: keys holding ``products:cost`` (admin) see inactive products and the ``cost`` field;
every other key sees active products only, never cost. Reads select columns with Core and render
rows straight into dicts, so the list is one indexed keyset query and little per-row work (a zip,
JSON fields passed through unparsed). Cross-field rules and scope checks run before any write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any
from uuid import UUID

from orjson import Fragment
from sqlalchemy import Select, Text, bindparam, cast, select
from sqlalchemy.dialects.postgresql.psycopg import dialect as psycopg_dialect
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
from dps_api.schemas.catalog import ProductCreate, ProductUpdate
from dps_api.services.outbox import record_event

# response key -> attribute shared by Product and ProductVersion (``id`` is handled per table)
_FIELDS = (
    ("specId", "spec_id"),
    ("version", "version"),
    ("name", "name"),
    ("shortName", "short_name"),
    ("active", "active"),
    ("priceModel", "price_model"),
    ("priceFrequency", "price_frequency"),
    ("listPrices", "list_prices"),
    ("tiers", "tiers"),
    ("locked", "locked"),
    ("createdAt", "created_at"),
    ("updatedAt", "updated_at"),
)
_KEYS = ("id",) + tuple(key for key, _ in _FIELDS)
_KEYS_WITH_COST = _KEYS + ("cost",)
_JSON_ATTRS = frozenset({"list_prices", "tiers", "cost"})
# request field -> attribute, for partial updates
_UPDATABLE = {
    "name": "name",
    "shortName": "short_name",
    "active": "active",
    "priceModel": "price_model",
    "priceFrequency": "price_frequency",
    "listPrices": "list_prices",
    "tiers": "tiers",
    "locked": "locked",
    "cost": "cost",
}
_SNAPSHOT = ("organization_id", "spec_id") + tuple(_UPDATABLE.values()) + ("created_at",)


def sees_everything(principal: Principal) -> bool:
    """Admin keys: inactive products and cost data."""
    return principal.has(Scope.PRODUCTS_COST)


def _select(table: type[Product] | type[ProductVersion], with_cost: bool) -> Select:
    """The rendered columns; JSONB ones come back as their JSON text (see ``_rows``)."""
    id_column = table.id if table is Product else table.product_id
    attrs = [attr for _, attr in _FIELDS] + (["cost"] if with_cost else [])
    columns = [cast(getattr(table, a), Text) if a in _JSON_ATTRS else getattr(table, a) for a in attrs]
    return select(id_column, *columns)


def render(entity: Product, *, with_cost: bool) -> dict[str, Any]:
    """The API rendering of an ORM product (after a write); reads render rows with ``_rows``."""
    # str(): new ids are uuid6.UUID, a subclass orjson does not serialise (rows read back are uuid.UUID)
    product = {"id": str(entity.id), **{key: getattr(entity, attr) for key, attr in _FIELDS}}
    if with_cost:
        product["cost"] = entity.cost
    return product


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
    return str(stmt.order_by(Product.id).limit(bindparam("limit")).compile(dialect=psycopg_dialect()))


def _rows(rows: Iterable[Sequence[Any]], with_cost: bool) -> list[dict[str, Any]]:
    """Rows of ``_select``'s columns zipped into response dicts. The JSONB fields arrive as the text
    PostgreSQL stored and go out as ``orjson.Fragment``: parsing them into dicts only to serialise
    them again was most of the list's cost."""
    keys = _KEYS_WITH_COST if with_cost else _KEYS
    products = []
    for row in rows:
        product = dict(zip(keys, row))
        product["listPrices"] = Fragment(product["listPrices"])
        product["tiers"] = Fragment(product["tiers"])
        if with_cost:
            product["cost"] = Fragment(product["cost"])
        products.append(product)
    return products


def missing_scope(principal: Principal, scope: Scope, action: str) -> MissingScope:
    return MissingScope(principal.role, scope, action)


def check_product(state: dict[str, Any]) -> None:
    """Rules across fields, on the product as it would be saved (``state``: attribute -> value)."""
    model, frequency, tiers = state["price_model"], state["price_frequency"], state["tiers"]
    errors = []
    if model == "ONE_TIME_FEE" and frequency != "ONE_TIME":
        errors.append(("priceFrequency", "ONE_TIME_FEE products use the ONE_TIME price frequency"))
    if model != "ONE_TIME_FEE" and frequency == "ONE_TIME":
        errors.append(("priceFrequency", "only ONE_TIME_FEE products use the ONE_TIME price frequency"))
    if model != "TIERED" and tiers:
        errors.append(("tiers", "only TIERED products have tiers"))
    if model == "TIERED" and not tiers:
        errors.append(("tiers", "TIERED products need tiers"))
    if model == "TIERED" and tiers and set(tiers) != set(state["list_prices"]):
        errors.append(("tiers", "tiers must give exactly the currencies of listPrices"))
    if errors:
        raise invalid_fields(errors)


def default_frequency(price_model: str) -> str:
    return "ONE_TIME" if price_model == "ONE_TIME_FEE" else "MONTHLY"


class CatalogService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime]):
        self._tx = tx
        self._now = now

    def list_products(self, principal: Principal, page: PageRequest, active: bool | None) -> list[dict[str, Any]]:
        """``limit + 1`` products after the page's position, id ascending."""
        everything = sees_everything(principal)
        after = resume_after(page, [UUID])
        params = {"organization_id": principal.organization_id, "limit": page.limit + 1}
        if after is not None:
            params["after"] = after[0]
        with self._tx.read_cursor() as cursor:
            cursor.execute(_list_sql(everything, active, after is not None), params)
            return _rows(cursor.fetchall(), everything)

    def get_product(self, principal: Principal, product_id: UUID) -> dict[str, Any]:
        everything = sees_everything(principal)
        stmt = _select(Product, everything).where(
            Product.id == product_id, Product.organization_id == principal.organization_id
        )
        if not everything:
            stmt = stmt.where(Product.active.is_(True))
        with self._tx.read() as session:
            rows = _rows(session.execute(stmt), everything)
        if not rows:
            raise not_found("Product")
        return rows[0]

    def get_product_version(self, principal: Principal, product_id: UUID, version: int) -> dict[str, Any]:
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
            rows = _rows(session.execute(stmt), everything)
        if not rows:
            raise not_found("Product version")
        return rows[0]

    def create_product(self, principal: Principal, body: ProductCreate) -> dict[str, Any]:
        if body.locked and not principal.has(Scope.LOCKED_PRICES_WRITE):
            raise missing_scope(principal, Scope.LOCKED_PRICES_WRITE, "Creating a locked product")
        if body.cost is not None and not principal.has(Scope.PRODUCTS_COST):
            raise missing_scope(principal, Scope.PRODUCTS_COST, "Setting cost data")
        now = self._now()
        state = {
            "organization_id": principal.organization_id,
            "spec_id": body.specId,
            "name": body.name,
            "short_name": body.shortName,
            "active": body.active,
            "price_model": body.priceModel,
            "price_frequency": body.priceFrequency or default_frequency(body.priceModel),
            "list_prices": body.listPrices,
            "tiers": body.tiers or {},
            "locked": body.locked,
            "cost": body.cost or {},
            "created_at": now,
        }
        check_product(state)
        with self._tx() as session:
            taken = session.scalar(
                select(Product.id).where(
                    Product.organization_id == principal.organization_id, Product.spec_id == body.specId
                )
            )
            if taken is not None:
                raise _spec_id_taken(body.specId)
            product = Product(**state, version=1, updated_at=now)
            session.add(product)
            try:
                session.flush()
            except IntegrityError:  # a concurrent create won the race for this specId
                raise _spec_id_taken(body.specId) from None
            self._save_version(session, product)
            snapshot = render(product, with_cost=True)
            record_event(session, "product.created", principal.organization_id, snapshot, now)
        return snapshot

    def update_product(self, principal: Principal, product_id: UUID, body: ProductUpdate) -> dict[str, Any]:
        """Any change makes version + 1 (and a ``product.updated`` event); a PATCH that changes
        nothing returns the product as it is, without a new version."""
        sent = body.model_fields_set
        with self._tx() as session:
            product = session.scalar(
                select(Product)
                .where(Product.id == product_id, Product.organization_id == principal.organization_id)
                .with_for_update()
            )
            if product is None:
                raise not_found("Product")
            if "specId" in sent and body.specId != product.spec_id:
                raise invalid_fields([("specId", "cannot be changed; it identifies the product across versions")])
            changes = self._changes(product, body, sent)
            self._check_scopes(principal, product, changes)
            check_product({attr: changes.get(attr, getattr(product, attr)) for attr in _SNAPSHOT})
            if not changes:
                return render(product, with_cost=True)
            now = self._now()
            for attr, value in changes.items():
                setattr(product, attr, value)
            product.version += 1
            product.updated_at = now
            session.flush()
            self._save_version(session, product)
            snapshot = render(product, with_cost=True)
            record_event(session, "product.updated", principal.organization_id, snapshot, now)
        return snapshot

    @staticmethod
    def _changes(product: Product, body: ProductUpdate, sent: set[str]) -> dict[str, Any]:
        """attribute -> new value, for the sent fields that differ, with the values a new price
        model implies (tiers dropped when leaving TIERED, the frequency it needs) unless sent."""
        changes = {}
        for field, attr in _UPDATABLE.items():
            if field not in sent:
                continue
            value = getattr(body, field)
            if value is None and attr in ("tiers", "cost"):
                value = {}
            if value != getattr(product, attr):
                changes[attr] = value
        model = changes.get("price_model")
        if model is not None:
            if model != "TIERED" and "tiers" not in sent:
                changes["tiers"] = {}
            frequency_ok = (product.price_frequency == "ONE_TIME") == (model == "ONE_TIME_FEE")
            if "priceFrequency" not in sent and not frequency_ok:
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
