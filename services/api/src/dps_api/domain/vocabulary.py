"""The vocabulary of the api's domain: one enum per concept.

The api owns these: its CHECK constraints, schemas and services all take them from here. The quote
snapshot it serves to the billing connector carries their values on the wire; the connector reads them
with its own types (``dps_billing.domain.quote_snapshot``), so a value added here ships with the api
alone (the contract test in ``tests/contract/fixtures`` keeps the two in step).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "PERIOD_MONTHS",
    "BillingFrequency",
    "OpportunityStage",
    "PriceBasis",
    "PriceFrequency",
    "PriceModel",
    "QuoteStatus",
]


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
    """How often a product's list price is charged."""

    MONTHLY = "MONTHLY"
    QUARTERLY = "QUARTERLY"
    SEMI_ANNUAL = "SEMI_ANNUAL"
    ANNUAL = "ANNUAL"
    ONE_TIME = "ONE_TIME"


class BillingFrequency(StrEnum):
    """How often a quote bills its recurring lines."""

    MONTHLY = "MONTHLY"
    QUARTERLY = "QUARTERLY"
    SEMI_ANNUAL = "SEMI_ANNUAL"
    ANNUAL = "ANNUAL"


PERIOD_MONTHS: dict[str, int] = {
    BillingFrequency.MONTHLY: 1,
    BillingFrequency.QUARTERLY: 3,
    BillingFrequency.SEMI_ANNUAL: 6,
    BillingFrequency.ANNUAL: 12,
}


class PriceBasis(StrEnum):
    """Which side of a line's negotiation is kept; the other is derived from it."""

    DISCOUNT = "DISCOUNT"  # the discount percent
    NET = "NET"  # the net unit price


class OpportunityStage(StrEnum):
    PROSPECTING = "PROSPECTING"
    QUALIFICATION = "QUALIFICATION"
    PROPOSAL = "PROPOSAL"
    NEGOTIATION = "NEGOTIATION"
    CLOSED_WON = "CLOSED_WON"  # set only by the closed-won action
    CLOSED_LOST = "CLOSED_LOST"
