"""Approval rule conditions: validation naming the field, strict thresholds, currency-specific totals."""

from decimal import Decimal
from uuid import uuid4

import pytest

from dps_common.errors import ValidationFailed

from dps_api.domain.approval_rules import (
    Condition,
    ConditionType,
    QuoteTerms,
    RuleSpec,
    fired_rules,
    fires,
    make_condition,
)
from dps_api.schemas.approval_config import render_condition

D = Decimal


def terms(**overrides) -> QuoteTerms:
    values = dict(
        currency="USD",
        total_contract_value=D("10000.00"),
        max_discount_percent=D("10"),
        subscription_term_months=12,
        locked_below_list=False,
    )
    values.update(overrides)
    return QuoteTerms(**values)


def test_discount_above_fires_strictly_above_the_threshold():
    condition = make_condition(ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, D("20"), None)
    assert not fires(condition, terms(max_discount_percent=D("19.9999")))
    assert not fires(condition, terms(max_discount_percent=D("20.0000")))
    assert fires(condition, terms(max_discount_percent=D("20.0001")))


def test_total_contract_value_fires_only_in_its_currency_and_strictly_above():
    condition = make_condition(ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, D("50000"), "USD")
    assert not fires(condition, terms(total_contract_value=D("50000.00")))
    assert fires(condition, terms(total_contract_value=D("50000.01")))
    # the same amount in another currency never trips a USD rule, however large
    assert not fires(condition, terms(currency="EUR", total_contract_value=D("999999999.00")))


def test_total_contract_value_in_a_zero_decimal_currency():
    condition = make_condition(ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, D("1000000"), "JPY")
    assert not fires(condition, terms(currency="JPY", total_contract_value=D("1000000")))
    assert fires(condition, terms(currency="JPY", total_contract_value=D("1000001")))
    assert render_condition(condition) == {"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "1000000", "currency": "JPY"}


def test_term_months_above_is_strict():
    condition = make_condition(ConditionType.TERM_MONTHS_ABOVE, D("36"), None)
    assert not fires(condition, terms(subscription_term_months=36))
    assert fires(condition, terms(subscription_term_months=37))


def test_locked_price_below_list_follows_the_quote_fact():
    condition = make_condition(ConditionType.LOCKED_PRICE_BELOW_LIST, None, None)
    assert fires(condition, terms(locked_below_list=True))
    assert not fires(condition, terms(locked_below_list=False))
    assert render_condition(condition) == {"type": "LOCKED_PRICE_BELOW_LIST", "threshold": None, "currency": None}


def test_zero_threshold_fires_on_any_positive_value():
    condition = make_condition(ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, D("0"), None)
    assert not fires(condition, terms(max_discount_percent=D("0")))
    assert fires(condition, terms(max_discount_percent=D("0.0001")))


@pytest.mark.parametrize(
    ("kind", "threshold", "currency", "field", "words"),
    [
        (ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, None, None, "condition.threshold", "required"),
        (ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, D("-1"), None, "condition.threshold", "negative"),
        (ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, D("100.01"), None, "condition.threshold", "at most 100"),
        (ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, D("20"), "USD", "condition.currency", "only"),
        (ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, D("100"), None, "condition.currency", "required"),
        (ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, D("100"), "XXQ", "condition.currency", "ISO 4217"),
        (ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, D("100"), "XAU", "condition.currency", "minor units"),
        (ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, D("100.5"), "JPY", "condition.threshold", "0 decimal places"),
        (ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, D("100.001"), "USD", "condition.threshold", "2 decimal places"),
        (ConditionType.TERM_MONTHS_ABOVE, D("12.5"), None, "condition.threshold", "whole number"),
        (ConditionType.LOCKED_PRICE_BELOW_LIST, D("1"), None, "condition.threshold", "omitted"),
        (ConditionType.LOCKED_PRICE_BELOW_LIST, None, "USD", "condition.currency", "omitted"),
    ],
)
def test_invalid_conditions_name_the_field(kind, threshold, currency, field, words):
    with pytest.raises(ValidationFailed) as caught:
        make_condition(kind, threshold, currency)
    assert caught.value.extra["errors"][0]["field"] == field
    assert words in caught.value.detail


def test_valid_boundaries_are_accepted_and_rendered_canonically():
    assert make_condition(ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, D("100"), None).threshold == D("100")
    assert render_condition(make_condition(ConditionType.TERM_MONTHS_ABOVE, D("12.000"), None))["threshold"] == "12"
    usd = make_condition(ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, D("50000.5"), "USD")
    assert render_condition(usd) == {"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "50000.50", "currency": "USD"}
    # trailing zeros beyond the minor units are not extra precision
    assert render_condition(make_condition(ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, D("100.00"), "JPY"))["threshold"] == "100"
    assert render_condition(make_condition(ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, D("12.500000"), None))["threshold"] == "12.5"


def test_fired_rules_keeps_order_and_ignores_inactive_rules():
    group = uuid4()
    discount = RuleSpec(uuid4(), "discount", Condition(ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, D("5")), group, None)
    term = RuleSpec(uuid4(), "term", Condition(ConditionType.TERM_MONTHS_ABOVE, D("6")), group, None)
    inactive = RuleSpec(
        uuid4(), "off", Condition(ConditionType.TERM_MONTHS_ABOVE, D("1")), group, None, active=False
    )
    quiet = RuleSpec(uuid4(), "quiet", Condition(ConditionType.LOCKED_PRICE_BELOW_LIST), group, None)
    assert fired_rules([term, inactive, quiet, discount], terms()) == [term, discount]
    assert fired_rules([], terms()) == []
