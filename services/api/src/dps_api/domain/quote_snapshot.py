"""The quote snapshot the api serves to the billing connector, and its JSON as the api writes it.

The api owns this shape; the connector reads it with its own reader (it never imports this module).
On the wire: money as decimal strings, dates as ISO 8601, enums as their values. The committed example
``tests/contract/fixtures/quote_snapshot.json`` is what this writer renders for a known quote (an api
test checks it), and the connector's tests read that same file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any
from uuid import UUID

from dps_api.domain.vocabulary import BillingFrequency, PriceFrequency, PriceModel, QuoteStatus


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
    price_model: PriceModel
    price_frequency: PriceFrequency
    quantity: Decimal
    # the negotiated price of one unit for one billing period of the quote (recurring lines) or once
    # (one-time lines), exact: net unit price x billing period months / price frequency months
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


@dataclass(frozen=True)
class QuoteSnapshot:
    id: UUID
    organization_id: UUID
    name: str
    status: QuoteStatus
    owner_user_id: UUID
    opportunity_id: UUID | None
    opportunity_crm_id: str | None
    currency: str  # ISO 4217, upper case
    billing_frequency: BillingFrequency
    subscription_term_months: int
    start_date: date | None
    end_date: date | None
    pricebook_id: UUID | None
    pricebook_version: int | None  # with each line's product version: the pinned catalog version
    recurring_per_billing_period: Decimal
    one_time: Decimal
    total_contract_value: Decimal
    lines: tuple[QuoteSnapshotLine, ...]

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
