"""Approval rules: which conditions a quote can trip, how a condition is validated, and which rules fire.

A rule's condition compares one fact of a quote with a threshold. Every comparison is strict
("above" / "below"): a quote exactly at the threshold does not fire the rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Protocol, TypeVar
from uuid import UUID

from dps_common.errors import invalid_field

from dps_api.domain.money import UnsupportedCurrency, currency_exponent

MAX_PERCENT = Decimal(100)


class ConditionType(StrEnum):
    MAX_DISCOUNT_PERCENT_ABOVE = "MAX_DISCOUNT_PERCENT_ABOVE"  # the largest line discount, in percent
    TOTAL_CONTRACT_VALUE_ABOVE = "TOTAL_CONTRACT_VALUE_ABOVE"  # in one currency: quotes in others never fire
    TERM_MONTHS_ABOVE = "TERM_MONTHS_ABOVE"  # subscription term, whole months
    LOCKED_PRICE_BELOW_LIST = "LOCKED_PRICE_BELOW_LIST"  # a locked product negotiated below its list price


@dataclass(frozen=True, slots=True)
class Condition:
    type: ConditionType
    threshold: Decimal | None = None
    currency: str | None = None


@dataclass(frozen=True, slots=True)
class QuoteTerms:
    """The facts of a quote that rules look at."""

    currency: str
    total_contract_value: Decimal
    max_discount_percent: Decimal
    subscription_term_months: int
    locked_below_list: bool


class EvaluableRule(Protocol):
    @property
    def active(self) -> bool: ...

    @property
    def condition(self) -> Condition: ...


R = TypeVar("R", bound=EvaluableRule)


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """A rule as the approval flow needs it: what fired it and whose approval it requires."""

    id: UUID
    name: str
    condition: Condition
    approval_group_id: UUID
    rule_group_id: UUID | None
    active: bool = True


def make_condition(
    kind: ConditionType, threshold: Decimal | None, currency: str | None, *, field: str = "condition"
) -> Condition:
    """A valid condition, or a 400 naming the offending field (``condition.threshold`` ...)."""
    if kind is ConditionType.LOCKED_PRICE_BELOW_LIST:
        if threshold is not None:
            raise invalid_field(f"{field}.threshold", "must be omitted for LOCKED_PRICE_BELOW_LIST")
        if currency is not None:
            raise invalid_field(f"{field}.currency", "must be omitted for LOCKED_PRICE_BELOW_LIST")
        return Condition(kind)
    if threshold is None:
        raise invalid_field(f"{field}.threshold", f"is required for {kind.value}")
    if threshold < 0:
        raise invalid_field(f"{field}.threshold", "must not be negative")
    if kind is ConditionType.TOTAL_CONTRACT_VALUE_ABOVE:
        if currency is None:
            raise invalid_field(f"{field}.currency", "is required for TOTAL_CONTRACT_VALUE_ABOVE")
        try:
            exponent = currency_exponent(currency)
        except UnsupportedCurrency as exc:
            raise invalid_field(f"{field}.currency", str(exc)) from None
        if threshold != threshold.quantize(Decimal(1).scaleb(-exponent)):
            raise invalid_field(f"{field}.threshold", f"{currency} amounts have at most {exponent} decimal places")
        return Condition(kind, threshold, currency)
    if currency is not None:
        raise invalid_field(f"{field}.currency", f"applies to TOTAL_CONTRACT_VALUE_ABOVE only, not {kind.value}")
    if kind is ConditionType.MAX_DISCOUNT_PERCENT_ABOVE and threshold > MAX_PERCENT:
        raise invalid_field(f"{field}.threshold", "a discount percent is at most 100")
    if kind is ConditionType.TERM_MONTHS_ABOVE and threshold != threshold.to_integral_value():
        raise invalid_field(f"{field}.threshold", "must be a whole number of months")
    return Condition(kind, threshold, None)


def _threshold(condition: Condition) -> Decimal:
    if condition.threshold is None:  # make_condition gives every type but LOCKED_PRICE_BELOW_LIST one
        raise ValueError(f"a {condition.type.value} condition without a threshold")
    return condition.threshold


def fires(condition: Condition, quote: QuoteTerms) -> bool:
    match condition.type:
        case ConditionType.MAX_DISCOUNT_PERCENT_ABOVE:
            return quote.max_discount_percent > _threshold(condition)
        case ConditionType.TOTAL_CONTRACT_VALUE_ABOVE:
            return quote.currency == condition.currency and quote.total_contract_value > _threshold(condition)
        case ConditionType.TERM_MONTHS_ABOVE:
            return quote.subscription_term_months > _threshold(condition)
        case ConditionType.LOCKED_PRICE_BELOW_LIST:
            return quote.locked_below_list
    raise AssertionError(f"unhandled condition {condition.type}")


def fired_rules(rules: Iterable[R], quote: QuoteTerms) -> list[R]:
    """The active rules whose condition the quote trips, in the order given."""
    return [rule for rule in rules if rule.active and fires(rule.condition, quote)]
