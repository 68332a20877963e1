"""Each resource's render function against the response model that documents it: the JSON a
client receives (serialised as the app does) validates strictly, with no key the document lacks,
so the OpenAPI document and the JSON cannot drift apart. No I/O: views are built by hand."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID

import pytest
from pydantic import BaseModel, ValidationError

from dps_common.auth.principal import Principal
from dps_common.auth.scopes import Role
from dps_common.json import dumps, loads

from dps_api.domain.approval_config_views import ApprovalGroupView, ApprovalRuleGroupView, ApprovalRuleView
from dps_api.domain.approval_rules import Condition, ConditionType
from dps_api.domain.catalog_views import JsonText, PricebookView, ProductView
from dps_api.domain.key_access import ApiKeyView, IssuedApiKey, PersonView
from dps_api.domain.opportunity_views import DealGroupView, OpportunityView
from dps_api.domain.vocabulary import OpportunityStage, PriceFrequency, PriceModel
from dps_api.schemas.api_keys import (
    ApiKey,
    ApiKeyWithSecret,
    Person,
    render_api_key,
    render_issued_key,
    render_person,
)
from dps_api.schemas.approval_config import (
    ApprovalGroup,
    ApprovalRule,
    ApprovalRuleGroup,
    render_approval_group,
    render_approval_rule,
    render_approval_rule_group,
)
from dps_api.schemas.catalog import Pricebook, Product, render_pricebook, render_product
from dps_api.schemas.deal_groups import DealGroup, render_deal_group
from dps_api.schemas.opportunities import Opportunity, render_opportunity
from dps_api.schemas.whoami import Whoami, render_whoami

ID = UUID("01939a4e-0000-7000-8000-000000000001")
OTHER = UUID("01939a4e-0000-7000-8000-000000000002")
THIRD = UUID("01939a4e-0000-7000-8000-000000000003")
CREATED = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
UPDATED = datetime(2026, 2, 3, 10, 0, tzinfo=timezone(timedelta(hours=2)))  # rendered in UTC where the API says so


def sent_json(rendered: dict[str, Any]) -> bytes:
    """The body as the app sends it (its JSON handler)."""
    return dumps(rendered)


def assert_documented(model: type[BaseModel], rendered: dict[str, Any]) -> BaseModel:
    """Strict validation of the JSON sent, and no key anywhere that the model does not declare:
    response models keep extras (walked for), nested plain models drop them (keys compared)."""
    sent = sent_json(rendered)
    parsed = model.model_validate_json(sent, strict=True)
    _assert_no_extra(parsed, model.__name__)
    _assert_same_keys(loads(sent), parsed.model_dump(mode="json", exclude_unset=True), model.__name__)
    return parsed


def _assert_same_keys(sent: Any, documented: Any, where: str) -> None:
    if isinstance(sent, dict):
        assert set(sent) == set(documented), f"{where}: undocumented keys {sorted(set(sent) - set(documented))}"
        for key, item in sent.items():
            _assert_same_keys(item, documented[key], f"{where}.{key}")
    elif isinstance(sent, list):
        for index, (item, doc) in enumerate(zip(sent, documented, strict=True)):
            _assert_same_keys(item, doc, f"{where}[{index}]")


def _assert_no_extra(value: Any, where: str) -> None:
    if isinstance(value, BaseModel):
        assert not value.model_extra, f"{where}: undocumented keys {sorted(value.model_extra or {})}"
        for name in type(value).model_fields:
            _assert_no_extra(getattr(value, name), f"{where}.{name}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _assert_no_extra(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _assert_no_extra(item, f"{where}.{key}")


def test_the_check_refuses_an_undocumented_key_and_a_wrong_type():
    rendered = render_whoami(Principal(ID, "Acme", OTHER, Role.ADMIN, "k"))
    with pytest.raises(AssertionError, match="undocumented keys"):
        assert_documented(Whoami, {**rendered, "extra": 1})
    with pytest.raises(AssertionError, match="undocumented keys"):
        assert_documented(Whoami, {"organization": {**rendered["organization"], "extra": 1}})
    with pytest.raises(ValidationError):
        assert_documented(Whoami, {"organization": {"id": 1, "name": "Acme"}})


# --- products and pricebooks -------------------------------------------------------------------


def product(**fields: Any) -> ProductView:
    values: dict[str, Any] = {
        "id": ID,
        "spec_id": "SEAT",
        "version": 3,
        "name": "Seat",
        "short_name": None,
        "active": True,
        "price_model": PriceModel.TIERED,
        "price_frequency": PriceFrequency.MONTHLY,
        "list_prices": JsonText('{"USD": "10.00", "JPY": "1000"}'),
        "tiers": JsonText('{"USD": [{"upTo": "10", "unitPrice": "9.00"}, {"upTo": null, "unitPrice": "8.00"}]}'),
        "locked": True,
        "created_at": CREATED,
        "updated_at": UPDATED,
        "cost": None,
    }
    return ProductView(**(values | fields))


@pytest.mark.parametrize("cost", [None, JsonText('{"USD": "2.50"}')])
def test_product(cost):
    rendered = render_product(product(cost=cost))
    parsed = assert_documented(Product, rendered)
    body = loads(sent_json(rendered))
    assert ("cost" in body) == (cost is not None)  # present for keys that may see cost only
    assert body["priceModel"] == "TIERED" and body["tiers"]["USD"][1] == {"upTo": None, "unitPrice": "8.00"}
    assert parsed.model_dump()["id"] == str(ID)


def test_product_of_every_model_and_frequency():
    for model in PriceModel:
        for frequency in PriceFrequency:
            view = product(price_model=model, price_frequency=frequency, tiers=JsonText("{}"), short_name="S")
            assert loads(sent_json(render_product(view)))["priceFrequency"] == frequency.value
            assert_documented(Product, render_product(view))


def test_pricebook():
    view = PricebookView(
        id=ID,
        version=2,
        name="Partner",
        currency="JPY",
        active=False,
        assigned_user_ids=[OTHER, THIRD],
        entries={OTHER: Decimal("1000"), THIRD: Decimal("12")},
        created_at=CREATED,
        updated_at=UPDATED,
    )
    rendered = render_pricebook(view)
    assert_documented(Pricebook, rendered)
    assert loads(sent_json(rendered))["entries"] == [
        {"productId": str(OTHER), "unitPrice": "1000"},
        {"productId": str(THIRD), "unitPrice": "12"},
    ]


# --- opportunities and deal groups -------------------------------------------------------------


@pytest.mark.parametrize(
    ("amount", "currency", "shown"),
    [(Decimal("1234.5"), "USD", "1234.50"), (None, "USD", None), (None, None, None), (Decimal("7"), "JPY", "7")],
)
def test_opportunity(amount, currency, shown):
    view = OpportunityView(
        id=ID,
        crm_id=None,
        name="Deal",
        account_name="Acme",
        owner_user_id=OTHER,
        stage=OpportunityStage.CLOSED_WON,
        amount=amount,
        currency=currency,
        close_date=date(2026, 12, 31),
        closed_won_at=UPDATED,
        created_at=CREATED,
        updated_at=UPDATED,
    )
    rendered = render_opportunity(view)
    assert_documented(Opportunity, rendered)
    body = loads(sent_json(rendered))
    assert (body["amount"], body["stage"], body["closeDate"]) == (shown, "CLOSED_WON", "2026-12-31")
    assert body["updatedAt"] == "2026-02-03T08:00:00+00:00"


def test_deal_group():
    view = DealGroupView(ID, "Bundle", None, [OTHER, THIRD], CREATED, UPDATED)
    rendered = render_deal_group(view)
    assert_documented(DealGroup, rendered)
    assert loads(sent_json(rendered))["opportunityIds"] == [str(OTHER), str(THIRD)]


# --- approval configuration and whoami ---------------------------------------------------------


def test_approval_group():
    view = ApprovalGroupView(ID, "Finance", [OTHER, THIRD], 2, CREATED, UPDATED)
    assert_documented(ApprovalGroup, render_approval_group(view))


@pytest.mark.parametrize(
    ("condition", "rule_group_id"),
    [
        (Condition(ConditionType.MAX_DISCOUNT_PERCENT_ABOVE, Decimal("20")), None),
        (Condition(ConditionType.TOTAL_CONTRACT_VALUE_ABOVE, Decimal("250000"), "USD"), THIRD),
        (Condition(ConditionType.TERM_MONTHS_ABOVE, Decimal("24")), THIRD),
        (Condition(ConditionType.LOCKED_PRICE_BELOW_LIST), None),
    ],
)
def test_approval_rule(condition, rule_group_id):
    view = ApprovalRuleView(ID, "Rule", condition, OTHER, rule_group_id, True, CREATED, UPDATED)
    rendered = render_approval_rule(view)
    assert_documented(ApprovalRule, rendered)
    assert loads(sent_json(rendered))["condition"]["type"] == condition.type.value


def test_approval_rule_group():
    view = ApprovalRuleGroupView(ID, "Step 1", 10, [OTHER], CREATED, UPDATED)
    assert_documented(ApprovalRuleGroup, render_approval_rule_group(view))


def test_whoami():
    rendered = render_whoami(Principal(ID, "Acme", OTHER, Role.VIEW_ONLY, "k"))
    assert_documented(Whoami, rendered)
    assert loads(sent_json(rendered)) == {"organization": {"id": str(ID), "name": "Acme"}}


# --- the settings console: API keys and people -------------------------------------------------


@pytest.mark.parametrize("used", [None, UPDATED])
def test_api_key(used):
    view = ApiKeyView(ID, "Salesforce sync", Role.VIEW_ONLY, OTHER, "Sam", "he7pokmZ5sGV", "active", CREATED, used, used, None)
    parsed = assert_documented(ApiKey, render_api_key(view))
    assert loads(sent_json(render_api_key(view)))["prefix"] == "dps_he7pokmZ5sGV"
    assert parsed.role is Role.VIEW_ONLY
    issued = render_issued_key(IssuedApiKey(view, "dps_he7pokmZ5sGV_secret"))
    assert assert_documented(ApiKeyWithSecret, issued).secret == "dps_he7pokmZ5sGV_secret"


def test_person():
    assert_documented(Person, render_person(PersonView(ID, "sam@example.test", "Sam", Role.USER, True)))
