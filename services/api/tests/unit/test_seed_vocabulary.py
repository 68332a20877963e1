"""The demo seed speaks the API's contract, not its modules (``dps_api.cli.seed.data``): each word it
sends is one the API's own vocabulary holds, so a renamed value fails here, before a seed runs."""

from __future__ import annotations

from enum import StrEnum
from typing import get_args

import pytest

from dps_api.cli.seed import data
from dps_api.domain.approval_rules import ConditionType
from dps_api.domain.vocabulary import BillingFrequency, OpportunityStage, PriceFrequency, PriceModel


@pytest.mark.parametrize(("words", "vocabulary"), [
    (data.PriceModel, PriceModel),
    (data.PriceFrequency, PriceFrequency),
    (data.OpportunityStage, OpportunityStage),
    (data.ConditionType, ConditionType),
    (data.BillingFrequency, BillingFrequency),
], ids=lambda value: getattr(value, "__name__", ""))
def test_each_word_the_seed_sends_is_the_apis(words: object, vocabulary: type[StrEnum]) -> None:
    assert set(get_args(words)) <= {member.value for member in vocabulary}
