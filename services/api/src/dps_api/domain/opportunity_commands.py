"""What the opportunity use cases are asked to do: plain values, no request bodies, and the rule on
an opportunity's amount. Resources build the commands from request bodies; ``NOT_SENT`` leaves a
field as it is, ``None`` clears a nullable one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from uuid import UUID

from dps_common.errors import invalid_field

from dps_api.domain.commands import NOT_SENT, Patch
from dps_api.domain.money import currency_exponent, is_supported_currency, round_money
from dps_api.domain.vocabulary import OpportunityStage


@dataclass(frozen=True)
class NewOpportunity:
    name: str
    account_name: str
    crm_id: str | None = None
    owner_user_id: UUID | None = None  # None: the key's user
    stage: OpportunityStage = OpportunityStage.PROSPECTING
    amount: Decimal | None = None
    currency: str | None = None
    close_date: date | None = None


@dataclass(frozen=True)
class OpportunityChanges:
    """A partial update; ``None`` clears the nullable fields."""

    crm_id: Patch[str | None] = NOT_SENT
    name: Patch[str] = NOT_SENT
    account_name: Patch[str] = NOT_SENT
    owner_user_id: Patch[UUID] = NOT_SENT
    stage: Patch[OpportunityStage] = NOT_SENT
    amount: Patch[Decimal | None] = NOT_SENT
    currency: Patch[str | None] = NOT_SENT
    close_date: Patch[date | None] = NOT_SENT


def check_amount(amount: Decimal | None, currency: str | None) -> None:
    """A currency must be ISO 4217 with minor units; an amount needs one and must fit its minor units."""
    if currency is not None and not is_supported_currency(currency):
        raise invalid_field("currency", "must be an ISO 4217 currency code with minor units")
    if amount is None:
        return
    if currency is None:
        raise invalid_field("currency", "is required when amount is set")
    if amount < 0:
        raise invalid_field("amount", "must not be negative")
    if round_money(amount, currency) != amount:
        raise invalid_field("amount", f"has more decimals than {currency} allows ({currency_exponent(currency)})")


def unsigned_zero(amount: Decimal | None) -> Decimal | None:
    """"-0" becomes 0, so the response matches what is stored."""
    return abs(amount) if amount is not None and amount.is_zero() else amount
