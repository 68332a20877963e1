"""The vocabulary of the api's domain: one enum per concept.

The quote enums live in ``dps_common.contracts.quotes`` because the billing connector reads quotes through
the snapshot, whose types are exactly these; the api's CHECK constraints, schemas and services all
take them from here.
"""

from __future__ import annotations

from enum import StrEnum

from dps_common.contracts.quotes import (
    PERIOD_MONTHS,
    BillingFrequency,
    PriceFrequency,
    PriceModel,
    QuoteStatus,
)

__all__ = [
    "PERIOD_MONTHS",
    "BillingFrequency",
    "OpportunityStage",
    "PriceBasis",
    "PriceFrequency",
    "PriceModel",
    "QuoteStatus",
]


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
