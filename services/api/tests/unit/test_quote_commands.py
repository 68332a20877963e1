"""The quote resources make commands of the request bodies field by field by name (``subscriptionTermMonths`` ->
``subscription_term_months``): a body field without its command field, or one sent to another,
fails here rather than as a 500."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from uuid import UUID

from dps_common.json import dumps

from dps_api.domain.commands import NOT_SENT
from dps_api.domain.quote_commands import CreateQuote, QuoteLineInput, UpdateQuoteLine
from dps_api.domain.vocabulary import BillingFrequency
from dps_api.resources import quote_lines
from dps_api.resources.quotes import create_command, update_command
from dps_api.schemas.quotes import QuoteCreate, QuoteLineUpdate, QuoteUpdate

OPPORTUNITY, OWNER, PRODUCT = UUID(int=1), UUID(int=2), UUID(int=3)
EVERY_HEADER_FIELD = {
    "name": "Renewal", "opportunityId": str(OPPORTUNITY), "ownerUserId": str(OWNER), "currency": "EUR",
    "billingFrequency": "ANNUAL", "subscriptionTermMonths": 36, "startDate": "2027-01-01", "endDate": None,
    "pricebookId": None,
}
EVERY_HEADER_ATTRIBUTE = {
    "name": "Renewal", "opportunity_id": OPPORTUNITY, "owner_user_id": OWNER, "currency": "EUR",
    "billing_frequency": BillingFrequency.ANNUAL, "subscription_term_months": 36, "start_date": date(2027, 1, 1),
    "end_date": None, "pricebook_id": None,
}


def test_an_update_sending_every_field_sends_each_to_its_command_field():
    assert set(EVERY_HEADER_FIELD) == set(QuoteUpdate.model_fields)
    assert update_command(QuoteUpdate.model_validate_json(dumps(EVERY_HEADER_FIELD))).sent() == EVERY_HEADER_ATTRIBUTE
    assert update_command(QuoteUpdate.model_validate_json(b"{}")).sent() == {}


def test_a_create_copies_every_field_to_its_command_field():
    line = {"productId": str(PRODUCT), "quantity": "2.5", "customName": "Seats", "discountPercent": "10"}
    body = {**EVERY_HEADER_FIELD, "lines": [line]}
    assert set(body) == set(QuoteCreate.model_fields)
    assert create_command(QuoteCreate.model_validate_json(dumps(body))) == CreateQuote(
        **EVERY_HEADER_ATTRIBUTE,
        lines=(QuoteLineInput(PRODUCT, Decimal("2.5"), "Seats", discount_percent=Decimal("10")),),
    )


def test_a_line_edit_keeps_its_unsent_fields_unsent_and_reads_decimals():
    edit = quote_lines.update_command(QuoteLineUpdate.model_validate_json(b'{"netUnitPrice": "9.50", "customName": null}'))
    assert edit == UpdateQuoteLine(quantity=NOT_SENT, custom_name=None, net_unit_price=Decimal("9.50"))
