"""Billing pushes read into views (``PushView``): a push row with the objects it created."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from uuid import UUID

from sqlalchemy import select
from sqlalchemy.orm import Session

from dps_billing.db.models import BillingPush, PushObject
from dps_billing.domain.push_views import PushedProduct, PushError, PushView

WHAT = "Billing push"


def _products(objects: Iterable[PushObject]) -> tuple[PushedProduct, ...]:
    """One entry per quote line with a product created, in plan order, with its price when created."""
    products: dict[str, str] = {}
    prices: dict[str, str] = {}
    for obj in sorted(objects, key=lambda o: (o.position, o.kind != "product")):
        if obj.kind == "quote" or obj.platform_id is None:
            continue
        if obj.kind == "product":
            products[obj.line_id] = obj.platform_id
        elif obj.line_id in products:
            prices[obj.line_id] = obj.platform_id
    return tuple(PushedProduct(line, product, prices.get(line)) for line, product in products.items())


def push_view(push: BillingPush, objects: Iterable[PushObject]) -> PushView:
    error = None
    if push.error_code is not None:
        error = PushError(push.error_code, push.error_message, push.error_param)
    return PushView(
        id=push.id,
        organization_id=push.organization_id,
        quote_id=push.quote_id,
        status=push.status,
        lines_total=push.lines_total,
        products_created=push.products_created,
        prices_created=push.prices_created,
        quote_created=push.quote_created,
        warnings=tuple(push.warnings),
        error=error,
        billing_quote_id=push.billing_quote_id,
        review_url=push.review_url,
        products=_products(objects),
        requested_by=push.requested_by,
        created_at=push.created_at,
        updated_at=push.updated_at,
        finished_at=push.finished_at,
    )


def objects_of(session: Session, push_ids: list[UUID]) -> dict[UUID, list[PushObject]]:
    found: dict[UUID, list[PushObject]] = defaultdict(list)
    if push_ids:
        for obj in session.scalars(select(PushObject).where(PushObject.push_id.in_(push_ids))):
            found[obj.push_id].append(obj)
    return found


def push_views(session: Session, pushes: list[BillingPush]) -> list[PushView]:
    objects = objects_of(session, [push.id for push in pushes])
    return [push_view(push, objects.get(push.id, [])) for push in pushes]
