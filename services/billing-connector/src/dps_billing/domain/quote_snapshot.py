"""The quote snapshot as the billing connector reads it from the api, in the connector's own types.

The api owns quotes and writes the snapshot (its JSON: money as decimal strings, dates as ISO 8601);
this module is the connector's reader, and never imports the api. It is tolerant where the connector
knows what to do with a value it does not know: a status, price model or price frequency the api added
since is read as ``Unsupported`` (carrying the value sent), so such a quote is refused as not approved
and such a line is skipped with a warning, as tiered lines are, instead of failing the read. A billing
frequency it does not know is refused (``SnapshotError``): it sets every recurring price's interval.
``to_json`` writes back what was read (the push keeps it and its worker reads it again).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any, TypeVar
from uuid import UUID

QUOTE = "Pricing quote"  # what its problems call it (404 of an unknown id)


class QuoteStatus(StrEnum):
    DRAFT = "DRAFT"
    PENDING_APPROVAL = "PENDING_APPROVAL"
    APPROVED = "APPROVED"
    REJECTED = "REJECTED"


class PriceModel(StrEnum):
    FLAT = "FLAT"
    PER_UNIT = "PER_UNIT"
    TIERED = "TIERED"
    RAMPED = "RAMPED"
    HOURLY = "HOURLY"
    ONE_TIME_FEE = "ONE_TIME_FEE"


class PriceFrequency(StrEnum):
    MONTHLY = "MONTHLY"
    QUARTERLY = "QUARTERLY"
    SEMI_ANNUAL = "SEMI_ANNUAL"
    ANNUAL = "ANNUAL"
    ONE_TIME = "ONE_TIME"


class BillingFrequency(StrEnum):
    MONTHLY = "MONTHLY"
    QUARTERLY = "QUARTERLY"
    SEMI_ANNUAL = "SEMI_ANNUAL"
    ANNUAL = "ANNUAL"


PERIOD_MONTHS: dict[BillingFrequency, int] = {
    BillingFrequency.MONTHLY: 1,
    BillingFrequency.QUARTERLY: 3,
    BillingFrequency.SEMI_ANNUAL: 6,
    BillingFrequency.ANNUAL: 12,
}


@dataclass(frozen=True)
class Unsupported:
    """A value the api sent that this connector does not know (a status or price model added since)."""

    value: str


class SnapshotError(ValueError):
    """A snapshot body the connector cannot read."""


@dataclass(frozen=True)
class QuoteSnapshotLine:
    id: UUID
    position: int
    product_id: UUID
    product_spec_id: str
    product_version: int
    product_name: str
    product_short_name: str | None
    custom_name: str | None
    price_model: PriceModel | Unsupported
    price_frequency: PriceFrequency | Unsupported
    quantity: Decimal
    # the negotiated price of one unit for one billing period of the quote (recurring lines) or once
    # (one-time lines), as the api computed it
    unit_amount: Decimal
    recurring: bool
    amount: Decimal  # the line's amount per billing period (recurring) or once, at minor units

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "position": self.position,
            "productId": str(self.product_id),
            "productSpecId": self.product_spec_id,
            "productVersion": self.product_version,
            "productName": self.product_name,
            "productShortName": self.product_short_name,
            "customName": self.custom_name,
            "priceModel": self.price_model.value,
            "priceFrequency": self.price_frequency.value,
            "quantity": str(self.quantity),
            "unitAmount": str(self.unit_amount),
            "recurring": self.recurring,
            "amount": str(self.amount),
        }

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> QuoteSnapshotLine:
        return cls(
            id=_uuid(body, "id"),
            position=_int(body, "position"),
            product_id=_uuid(body, "productId"),
            product_spec_id=_str(body, "productSpecId"),
            product_version=_int(body, "productVersion"),
            product_name=_str(body, "productName"),
            product_short_name=_optional_str(body, "productShortName"),
            custom_name=_optional_str(body, "customName"),
            price_model=_known(PriceModel, body, "priceModel"),
            price_frequency=_known(PriceFrequency, body, "priceFrequency"),
            quantity=_decimal(body, "quantity"),
            unit_amount=_decimal(body, "unitAmount"),
            recurring=_bool(body, "recurring"),
            amount=_decimal(body, "amount"),
        )


@dataclass(frozen=True)
class QuoteSnapshot:
    id: UUID
    organization_id: UUID
    name: str
    status: QuoteStatus | Unsupported
    owner_user_id: UUID
    opportunity_id: UUID | None
    opportunity_crm_id: str | None
    currency: str  # ISO 4217
    billing_frequency: BillingFrequency
    subscription_term_months: int
    start_date: date | None
    end_date: date | None
    pricebook_id: UUID | None
    pricebook_version: int | None
    recurring_per_billing_period: Decimal
    one_time: Decimal
    total_contract_value: Decimal
    lines: tuple[QuoteSnapshotLine, ...]

    @property
    def billing_period_months(self) -> int:
        return PERIOD_MONTHS[self.billing_frequency]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "organizationId": str(self.organization_id),
            "name": self.name,
            "status": self.status.value,
            "ownerUserId": str(self.owner_user_id),
            "opportunityId": None if self.opportunity_id is None else str(self.opportunity_id),
            "opportunityCrmId": self.opportunity_crm_id,
            "currency": self.currency,
            "billingFrequency": self.billing_frequency.value,
            "subscriptionTermMonths": self.subscription_term_months,
            "startDate": None if self.start_date is None else self.start_date.isoformat(),
            "endDate": None if self.end_date is None else self.end_date.isoformat(),
            "pricebookId": None if self.pricebook_id is None else str(self.pricebook_id),
            "pricebookVersion": self.pricebook_version,
            "totals": {
                "recurringPerBillingPeriod": str(self.recurring_per_billing_period),
                "oneTime": str(self.one_time),
                "totalContractValue": str(self.total_contract_value),
            },
            "lines": [line.to_json() for line in self.lines],
        }

    @classmethod
    def from_json(cls, body: Any) -> QuoteSnapshot:
        if not isinstance(body, dict):
            raise SnapshotError("a quote snapshot is a JSON object")
        totals = body.get("totals")
        lines = body.get("lines")
        if not isinstance(totals, dict) or not isinstance(lines, list):
            raise SnapshotError("a quote snapshot has totals and lines")
        opportunity_id = body.get("opportunityId")
        pricebook_id = body.get("pricebookId")
        pricebook_version = body.get("pricebookVersion")
        return cls(
            id=_uuid(body, "id"),
            organization_id=_uuid(body, "organizationId"),
            name=_str(body, "name"),
            status=_known(QuoteStatus, body, "status"),
            owner_user_id=_uuid(body, "ownerUserId"),
            opportunity_id=None if opportunity_id is None else _uuid(body, "opportunityId"),
            opportunity_crm_id=_optional_str(body, "opportunityCrmId"),
            currency=_str(body, "currency"),
            billing_frequency=_enum(BillingFrequency, body, "billingFrequency"),
            subscription_term_months=_int(body, "subscriptionTermMonths"),
            start_date=_optional_date(body, "startDate"),
            end_date=_optional_date(body, "endDate"),
            pricebook_id=None if pricebook_id is None else _uuid(body, "pricebookId"),
            pricebook_version=None if pricebook_version is None else _int(body, "pricebookVersion"),
            recurring_per_billing_period=_decimal(totals, "recurringPerBillingPeriod"),
            one_time=_decimal(totals, "oneTime"),
            total_contract_value=_decimal(totals, "totalContractValue"),
            lines=tuple(QuoteSnapshotLine.from_json(_object(line)) for line in lines),
        )


def _object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SnapshotError("a quote snapshot line is a JSON object")
    return value


def _str(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise SnapshotError(f"{name}: a string is required")
    return value


def _optional_str(body: dict[str, Any], name: str) -> str | None:
    return None if body.get(name) is None else _str(body, name)


def _int(body: dict[str, Any], name: str) -> int:
    value = body.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise SnapshotError(f"{name}: an integer is required")
    return value


def _bool(body: dict[str, Any], name: str) -> bool:
    value = body.get(name)
    if not isinstance(value, bool):
        raise SnapshotError(f"{name}: a boolean is required")
    return value


def _uuid(body: dict[str, Any], name: str) -> UUID:
    try:
        return UUID(_str(body, name))
    except ValueError:
        raise SnapshotError(f"{name}: a UUID is required") from None


def _decimal(body: dict[str, Any], name: str) -> Decimal:
    try:
        value = Decimal(_str(body, name))
    except InvalidOperation:
        raise SnapshotError(f"{name}: a decimal string is required") from None
    if not value.is_finite():
        raise SnapshotError(f"{name}: a finite decimal is required")
    return value


def _optional_date(body: dict[str, Any], name: str) -> date | None:
    if body.get(name) is None:
        return None
    try:
        return date.fromisoformat(_str(body, name))
    except ValueError:
        raise SnapshotError(f"{name}: an ISO 8601 date is required") from None


_E = TypeVar("_E", bound=StrEnum)


def _enum(kind: type[_E], body: dict[str, Any], name: str) -> _E:
    try:
        return kind(_str(body, name))
    except ValueError:
        raise SnapshotError(f"{name}: one of {', '.join(member.value for member in kind)} is required") from None


def _known(kind: type[_E], body: dict[str, Any], name: str) -> _E | Unsupported:
    value = _str(body, name)
    try:
        return kind(value)
    except ValueError:
        return Unsupported(value)
