"""The catalog as the quotes work sees it: pin a pricebook, price a product in a currency.

Called inside the caller's transaction (it receives the session and never commits). Unit-free: it
returns unit prices and tiers; line amounts are computed by the quotes work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any
from uuid import UUID

from sqlalchemy import Integer, Uuid, any_, bindparam, func, select
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Scope
from dps_common.errors import Conflict, Forbidden, ValidationFailed, not_found

from dps_api.db.models.catalog import (
    Pricebook,
    PricebookEntry,
    PricebookUser,
    PricebookVersion,
    Product,
    ProductVersion,
)
from dps_api.domain.vocabulary import PriceFrequency, PriceModel


@dataclass(frozen=True)
class PricedProduct:
    product_id: UUID
    spec_id: str
    version: int
    name: str
    short_name: str | None
    price_model: PriceModel
    price_frequency: PriceFrequency
    locked: bool
    # in `currency`: the pinned pricebook's entry if it has one, else the product's list price
    list_unit_price: Decimal
    # TIERED: ((up_to or None, unit_price), ...) in `currency`, from the product version (a pricebook
    # entry does not replace tiers); () for other models or when the product has no tiers in `currency`
    tiers: tuple[tuple[Decimal | None, Decimal], ...]


@dataclass(frozen=True)
class PinnedPricebook:
    id: UUID
    version: int
    currency: str


def pin_pricebook(session: Session, principal: Principal, pricebook_id: UUID) -> PinnedPricebook:
    """The latest version of a pricebook the principal may use.

    NotFound for an unknown id or another organization's; Forbidden(code="pricebook_not_assigned")
    unless the principal's user is assigned or the key holds PRICEBOOKS_ANY;
    Conflict(code="pricebook_inactive") when the pricebook is inactive.
    """
    row = session.execute(
        select(Pricebook.id, Pricebook.version, Pricebook.currency, Pricebook.active).where(
            Pricebook.id == pricebook_id, Pricebook.organization_id == principal.organization_id
        )
    ).one_or_none()
    if row is None:
        raise not_found("Pricebook")
    if not principal.has(Scope.PRICEBOOKS_ANY):
        assigned = session.scalar(
            select(PricebookUser.user_id).where(
                PricebookUser.pricebook_id == pricebook_id, PricebookUser.user_id == principal.user_id
            )
        )
        if assigned is None:
            raise Forbidden(
                "This pricebook is not assigned to the API key's user; only assigned users "
                f"or keys with the '{Scope.PRICEBOOKS_ANY}' scope may use it.",
                code="pricebook_not_assigned",
            )
    if not row.active:
        raise Conflict("The pricebook is inactive and cannot be used for pricing.", code="pricebook_inactive")
    return PinnedPricebook(row.id, row.version, row.currency)


def pinned_pricebook(session: Session, organization_id: UUID, pricebook_id: UUID, version: int) -> PinnedPricebook:
    """A version pinned earlier (no permission or active check: the pin already happened)."""
    currency = session.scalar(
        select(PricebookVersion.currency).where(
            PricebookVersion.pricebook_id == pricebook_id,
            PricebookVersion.version == version,
            PricebookVersion.organization_id == organization_id,
        )
    )
    if currency is None:
        raise not_found("Pricebook version")
    return PinnedPricebook(pricebook_id, version, currency)


def price_product(
    session: Session,
    organization_id: UUID,
    product_id: UUID,
    currency: str,
    *,
    pricebook: PinnedPricebook | None,
    version: int | None = None,
) -> PricedProduct:
    """A product's prices in ``currency``.

    ``version`` None: the current version, which must be active (else ValidationFailed
    code="product_inactive"); a given version: that immutable version, active or not (re-pricing a
    pinned line). NotFound for an unknown product or version, or another organization's.
    ValidationFailed(code="pricebook_currency_mismatch") when ``pricebook`` is in another currency;
    ValidationFailed(code="no_price_in_currency") when neither a pricebook entry nor a list price
    exists in ``currency``.
    """
    wanted = [(product_id, version)]
    return CatalogPrices.load(session, organization_id, wanted, currency, pricebook=pricebook).price(product_id, version)


# (id, spec_id, version, name, short_name, active, price_model, price_frequency, list_prices, tiers, locked)
_Row = tuple[UUID, str, int, str, str | None, bool, str, str, dict[str, str], dict[str, list[dict[str, Any]]], bool]


class CatalogPrices:
    """The catalog rows of many lines, read in one query each (products or pinned versions, and the
    pricebook's entries), then priced one by one with ``price`` exactly as ``price_product`` prices
    one: the same checks in the same order, so a caller raising at the first line that fails gives
    the same error as pricing the lines one at a time."""

    def __init__(
        self,
        rows: dict[tuple[UUID, int | None], _Row],
        entries: dict[UUID, Decimal],
        currency: str,
        pricebook: PinnedPricebook | None,
    ):
        self._rows = rows
        self._entries = entries
        self._currency = currency
        self._pricebook = pricebook

    @classmethod
    def load(
        cls,
        session: Session,
        organization_id: UUID,
        wanted: Sequence[tuple[UUID, int | None]],
        currency: str,
        *,
        pricebook: PinnedPricebook | None,
    ) -> CatalogPrices:
        """``wanted``: (product id, None for the current version or a pinned version number)."""
        rows: dict[tuple[UUID, int | None], _Row] = {}
        current = list({product_id for product_id, version in wanted if version is None})
        pinned = list({(product_id, version) for product_id, version in wanted if version is not None})
        if current:
            found = session.execute(
                select(*_columns(Product, Product.id)).where(
                    Product.id == any_(_uuids(current)), Product.organization_id == organization_id
                )
            )
            rows.update(((row[0], None), tuple(row)) for row in found)
        if pinned:
            keys = func.unnest(_uuids([p for p, _ in pinned]), _ints([v for _, v in pinned])).table_valued(
                "product_id", "version"
            ).render_derived("wanted")
            found = session.execute(
                select(*_columns(ProductVersion, ProductVersion.product_id)).join(
                    keys,
                    (ProductVersion.product_id == keys.c.product_id) & (ProductVersion.version == keys.c.version),
                ).where(ProductVersion.organization_id == organization_id)
            )
            rows.update(((row[0], row[2]), tuple(row)) for row in found)
        entries: dict[UUID, Decimal] = {}
        if pricebook is not None and pricebook.currency == currency:
            ids = list({product_id for product_id, _ in wanted})
            entries = {
                product_id: unit_price
                for product_id, unit_price in session.execute(
                    select(PricebookEntry.product_id, PricebookEntry.unit_price).where(
                        PricebookEntry.pricebook_id == pricebook.id,
                        PricebookEntry.version == pricebook.version,
                        PricebookEntry.product_id == any_(_uuids(ids)),
                    )
                )
            }
        return cls(rows, entries, currency, pricebook)

    def price(self, product_id: UUID, version: int | None = None) -> PricedProduct:
        """One product's prices (``version`` as loaded); the errors of ``price_product``."""
        row = self._rows.get((product_id, version))
        if row is None:
            raise not_found("Product" if version is None else "Product version")
        _, spec_id, row_version, name, short_name, active, price_model, price_frequency, list_prices, tiers, locked = row
        if version is None and not active:
            raise ValidationFailed(f"Product {spec_id} is inactive and cannot be quoted.", code="product_inactive")
        currency, pricebook = self._currency, self._pricebook
        if pricebook is not None and pricebook.currency != currency:
            raise ValidationFailed(
                f"The pricebook's currency {pricebook.currency} differs from {currency}.",
                code="pricebook_currency_mismatch",
            )
        unit_price = self._entries.get(product_id) if pricebook is not None else None
        if unit_price is None and currency in list_prices:
            unit_price = Decimal(list_prices[currency])
        if unit_price is None:
            raise ValidationFailed(
                f"Product {spec_id} has no price in {currency} (no pricebook entry, no list price).",
                code="no_price_in_currency",
            )
        return PricedProduct(
            product_id=product_id,
            spec_id=spec_id,
            version=row_version,
            name=name,
            short_name=short_name,
            price_model=PriceModel(price_model),
            price_frequency=PriceFrequency(price_frequency),
            locked=locked,
            list_unit_price=unit_price,
            tiers=tuple(
                (None if tier["upTo"] is None else Decimal(tier["upTo"]), Decimal(tier["unitPrice"]))
                for tier in tiers.get(currency, ())
            ),
        )


def _columns(table: type[Product] | type[ProductVersion], key: Any) -> list[Any]:
    return [
        key,
        table.spec_id,
        table.version,
        table.name,
        table.short_name,
        table.active,
        table.price_model,
        table.price_frequency,
        table.list_prices,
        table.tiers,
        table.locked,
    ]


def _uuids(values: list[UUID]) -> Any:
    return bindparam(None, values, type_=ARRAY(Uuid()))


def _ints(values: list[int]) -> Any:
    return bindparam(None, values, type_=ARRAY(Integer()))
