"""Pricebooks: a product's unit price in one currency, per version, and the users who may use it.

Every change makes a new immutable version (``pricebook_versions`` + its ``pricebook_entries``), so
a quote that pinned a version keeps its prices. Who may use a pricebook for pricing is decided by
``catalog_lookup.pin_pricebook``; every key with ``pricebooks:read`` may read all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from uuid import UUID

from sqlalchemy import delete, insert, select, tuple_
from sqlalchemy.orm import Session

from dps_common.auth.principal import Principal
from dps_common.db import Transactions
from dps_common.errors import invalid_fields, not_found
from dps_common.keyset import keyset
from dps_common.paging import PageRequest

from dps_api.db.models.catalog import (
    Pricebook,
    PricebookEntry,
    PricebookUser,
    PricebookVersion,
    Product,
)
from dps_api.db.models.identity import User
from dps_api.domain.catalog_commands import NewPricebook, PricebookChanges, PriceEntry
from dps_api.domain.catalog_views import PricebookView
from dps_api.domain.commands import NOT_SENT, sent
from dps_api.domain.money import amount_problem, format_amount
from dps_api.services.outbox import Outbox

_VERSIONED = ("name", "currency", "active")


class PricebookService:
    def __init__(self, tx: Transactions, now: Callable[[], datetime], outbox: Outbox):
        self._tx = tx
        self._now = now
        self._outbox = outbox

    def list_pricebooks(self, principal: Principal, page: PageRequest, active: bool | None) -> list[PricebookView]:
        """``limit + 1`` pricebooks after the page's position, id ascending, each with its entries."""
        stmt = select(Pricebook).where(Pricebook.organization_id == principal.organization_id)
        if active is not None:
            stmt = stmt.where(Pricebook.active.is_(active))
        with self._tx.read() as session:
            pricebooks = list(session.scalars(keyset(stmt, [Pricebook.id], page, convert=[UUID])))
            return _views(session, pricebooks)

    def get_pricebook(self, principal: Principal, pricebook_id: UUID) -> PricebookView:
        with self._tx.read() as session:
            pricebook = _find(session, principal, pricebook_id)
            return _views(session, [pricebook])[0]

    def create_pricebook(self, principal: Principal, command: NewPricebook) -> PricebookView:
        with self._tx() as session:
            entries = _checked_entries(session, principal, command.currency, command.entries)
            user_ids = _checked_users(session, principal, command.assigned_user_ids)
            now = self._now()
            pricebook = Pricebook(
                organization_id=principal.organization_id,
                version=1,
                name=command.name,
                currency=command.currency,
                active=command.active,
                created_at=now,
                updated_at=now,
            )
            session.add(pricebook)
            session.flush()
            _save_version(session, pricebook, entries)
            _assign(session, pricebook.id, user_ids)
            view = _view(pricebook, entries, user_ids)
            self._outbox.record(session, view, principal.organization_id, now, "pricebook.created")
        return view

    def update_pricebook(self, principal: Principal, pricebook_id: UUID, command: PricebookChanges) -> PricebookView:
        """Any change makes version + 1 and a ``pricebook.updated`` event; no change, no version."""
        fields = sent(command)
        with self._tx() as session:
            pricebook = _find(session, principal, pricebook_id, for_update=True)
            changes = {attr: fields[attr] for attr in _VERSIONED if attr in fields}
            changes = {attr: v for attr, v in changes.items() if v != getattr(pricebook, attr)}
            currency = changes.get("currency", pricebook.currency)
            current_entries = _entries_of(session, [(pricebook.id, pricebook.version)])[pricebook.id]
            if command.entries is not NOT_SENT:
                entries = _checked_entries(session, principal, currency, command.entries)
            else:
                entries = _in_currency(currency, current_entries)
            current_users = _users_of(session, [pricebook.id])[pricebook.id]
            users = current_users
            if command.assigned_user_ids is not NOT_SENT:
                users = _checked_users(session, principal, command.assigned_user_ids)
            if not changes and entries == current_entries and users == current_users:
                return _view(pricebook, entries, users)
            now = self._now()
            for attr, value in changes.items():
                setattr(pricebook, attr, value)
            pricebook.version += 1
            pricebook.updated_at = now
            session.flush()
            _save_version(session, pricebook, entries)
            if users != current_users:
                session.execute(delete(PricebookUser).where(PricebookUser.pricebook_id == pricebook.id))
                _assign(session, pricebook.id, users)
            view = _view(pricebook, entries, users)
            self._outbox.record(session, view, principal.organization_id, now, "pricebook.updated")
        return view


def _find(session: Session, principal: Principal, pricebook_id: UUID, *, for_update: bool = False) -> Pricebook:
    stmt = select(Pricebook).where(
        Pricebook.id == pricebook_id, Pricebook.organization_id == principal.organization_id
    )
    pricebook = session.scalar(stmt.with_for_update() if for_update else stmt)
    if pricebook is None:
        raise not_found("Pricebook")
    return pricebook


def _in_currency(currency: str, entries: dict[UUID, Decimal]) -> dict[UUID, Decimal]:
    """Kept entries moved to a new currency: each must fit its minor units (else 400 on currency)."""
    errors = [
        ("currency", f"entry for product {pid}: {problem}")
        for pid, amount in entries.items()
        if (problem := amount_problem(currency, amount))
    ]
    if errors:
        raise invalid_fields(errors)
    return {pid: Decimal(format_amount(currency, amount)) for pid, amount in entries.items()}


def _checked_entries(
    session: Session, principal: Principal, currency: str, entries: Sequence[PriceEntry]
) -> dict[UUID, Decimal]:
    """product id -> unit price, each price valid in ``currency``, each product the organization's."""
    errors: list[tuple[str, str]] = []
    prices: dict[UUID, Decimal] = {}
    for index, entry in enumerate(entries):
        amount = entry.unit_price
        if entry.product_id in prices:
            errors.append((f"entries[{index}].productId", "the product already has an entry"))
        elif problem := amount_problem(currency, amount):
            errors.append((f"entries[{index}].unitPrice", problem))
        else:
            amount = Decimal(format_amount(currency, amount))
        prices[entry.product_id] = amount
    if prices:
        known = set(
            session.scalars(
                select(Product.id).where(
                    Product.organization_id == principal.organization_id, Product.id.in_(list(prices))
                )
            )
        )
        errors += [
            (f"entries[{index}].productId", "no such product in this organization")
            for index, entry in enumerate(entries)
            if entry.product_id not in known
        ]
    if errors:
        raise invalid_fields(errors)
    return dict(sorted(prices.items()))


def _checked_users(session: Session, principal: Principal, user_ids: Sequence[UUID]) -> list[UUID]:
    wanted = sorted(set(user_ids))
    if not wanted:
        return []
    known = set(
        session.scalars(select(User.id).where(User.organization_id == principal.organization_id, User.id.in_(wanted)))
    )
    errors = [
        (f"assignedUserIds[{index}]", "no such user in this organization")
        for index, user_id in enumerate(user_ids)
        if user_id not in known
    ]
    if errors:
        raise invalid_fields(errors)
    return wanted


def _save_version(session: Session, pricebook: Pricebook, entries: dict[UUID, Decimal]) -> None:
    session.add(
        PricebookVersion(
            pricebook_id=pricebook.id,
            version=pricebook.version,
            organization_id=pricebook.organization_id,
            name=pricebook.name,
            currency=pricebook.currency,
            active=pricebook.active,
            created_at=pricebook.updated_at,
        )
    )
    session.flush()
    if entries:
        session.execute(
            insert(PricebookEntry),
            [
                {"pricebook_id": pricebook.id, "version": pricebook.version, "product_id": pid, "unit_price": price}
                for pid, price in entries.items()
            ],
        )


def _assign(session: Session, pricebook_id: UUID, user_ids: list[UUID]) -> None:
    if user_ids:
        session.execute(insert(PricebookUser), [{"pricebook_id": pricebook_id, "user_id": u} for u in user_ids])


def _entries_of(session: Session, keys: list[tuple[UUID, int]]) -> dict[UUID, dict[UUID, Decimal]]:
    """Each pricebook's entries (product id -> unit price, product id ascending) at the given version."""
    found: dict[UUID, dict[UUID, Decimal]] = {pricebook_id: {} for pricebook_id, _ in keys}
    if keys:
        rows = session.execute(
            select(PricebookEntry.pricebook_id, PricebookEntry.product_id, PricebookEntry.unit_price)
            .where(tuple_(PricebookEntry.pricebook_id, PricebookEntry.version).in_(keys))
            .order_by(PricebookEntry.pricebook_id, PricebookEntry.product_id)
        )
        for pricebook_id, product_id, price in rows:
            found[pricebook_id][product_id] = price
    return found


def _users_of(session: Session, pricebook_ids: list[UUID]) -> dict[UUID, list[UUID]]:
    found: dict[UUID, list[UUID]] = {pricebook_id: [] for pricebook_id in pricebook_ids}
    if pricebook_ids:
        rows = session.execute(
            select(PricebookUser.pricebook_id, PricebookUser.user_id)
            .where(PricebookUser.pricebook_id.in_(pricebook_ids))
            .order_by(PricebookUser.pricebook_id, PricebookUser.user_id)
        )
        for pricebook_id, user_id in rows:
            found[pricebook_id].append(user_id)
    return found


def _views(session: Session, pricebooks: list[Pricebook]) -> list[PricebookView]:
    """A page with two queries in all (entries, users), never one per pricebook."""
    entries = _entries_of(session, [(p.id, p.version) for p in pricebooks])
    users = _users_of(session, [p.id for p in pricebooks])
    return [_view(p, entries[p.id], users[p.id]) for p in pricebooks]


def _view(pricebook: Pricebook, entries: dict[UUID, Decimal], user_ids: list[UUID]) -> PricebookView:
    return PricebookView(
        id=pricebook.id,
        version=pricebook.version,
        name=pricebook.name,
        currency=pricebook.currency,
        active=pricebook.active,
        assigned_user_ids=user_ids,
        entries=entries,
        created_at=pricebook.created_at,
        updated_at=pricebook.updated_at,
    )
