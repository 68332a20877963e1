"""The quote-to-billing mapping (spec section 4, "Billing push"): ``plan_push``.

- One product and one price per supported line, in line position order. Supported: fixed and
  per-unit recurring prices, and one-time fixed fees (``ONE_TIME_FEE`` model or ``ONE_TIME`` price
  frequency), sent without ``recurring``. Tiered, ramped and hourly lines, and lines of a price model
  the connector does not know (``Unsupported``: one the api added since), are skipped with a warning.
- The price's ``unit_amount`` is the line's negotiated price of one unit for one billing period of
  the quote (or once, for one-time fees), in the platform's minor units (``amounts``); recurring
  prices bill at the quote's billing frequency.
- One draft quote whose line items are those prices, with the line quantity rounded half up to a
  whole number, at least 1.
- Anything the platform would refuse (its limits, a quote that is not approved, no supported line)
  is an error here, before anything is created.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

from dps_billing.domain import limits
from dps_billing.domain.amounts import from_minor_units, to_minor_units
from dps_billing.domain.expiry import effective_date, quote_expiry
from dps_billing.domain.notices import Notice, NoticeCode
from dps_billing.domain.plan import (
    PlannedLine,
    PriceParams,
    ProductParams,
    PushPlan,
    QuoteLineItem,
    QuoteParams,
    Recurring,
)
from dps_billing.domain.quote_snapshot import (
    BillingFrequency,
    PriceFrequency,
    PriceModel,
    QuoteSnapshot,
    QuoteSnapshotLine,
    QuoteStatus,
    Unsupported,
)

UNSUPPORTED_MODELS = frozenset({PriceModel.TIERED, PriceModel.RAMPED, PriceModel.HOURLY})

INTERVALS: dict[BillingFrequency, Recurring] = {
    BillingFrequency.MONTHLY: Recurring("month", 1),
    BillingFrequency.QUARTERLY: Recurring("month", 3),
    BillingFrequency.SEMI_ANNUAL: Recurring("month", 6),
    BillingFrequency.ANNUAL: Recurring("year", 1),
}

_CURRENCY = re.compile(r"[A-Za-z]{3}")


class _Notes:
    def __init__(self) -> None:
        self.warnings: list[Notice] = []
        self.errors: list[Notice] = []

    def warn(self, code: NoticeCode, message: str, line_id: str | None = None) -> None:
        self.warnings.append(Notice(code=code, message=message, line_id=line_id))

    def error(self, code: NoticeCode, message: str, line_id: str | None = None) -> None:
        self.errors.append(Notice(code=code, message=message, line_id=line_id))


def plan_push(quote: QuoteSnapshot, now: datetime) -> PushPlan:
    """What to create on the billing platform for ``quote``, as of ``now`` (an aware datetime)."""
    notes = _Notes()
    if quote.status is not QuoteStatus.APPROVED:
        notes.error(NoticeCode.QUOTE_NOT_APPROVED, f"only an approved quote is pushed; this one is {quote.status.value}")
    if not _CURRENCY.fullmatch(quote.currency):
        notes.error(NoticeCode.INVALID_CURRENCY, f"the quote currency {quote.currency!r} is not an ISO 4217 code")
    if quote.subscription_term_months < 1:
        notes.error(NoticeCode.INVALID_TERM,
                    f"the subscription term is {quote.subscription_term_months} months; at least 1 is required")

    supported = [line for line in sorted(quote.lines, key=lambda line: line.position) if _supported(line, notes)]
    if not supported:
        notes.error(NoticeCode.NO_SUPPORTED_LINES,
                    "the quote has no line the billing platform supports (scalar prices and one-time fixed fees), "
                    "so no billing quote is created")
    planned = [_plan_line(line, quote, notes) for line in supported]
    notes.errors.extend(limits.line_item_problems(len(supported)))
    notes.errors.extend(limits.interval_problems(
        [(line.price.recurring.interval, line.price.recurring.interval_count)
         for line in planned if line.price.recurring is not None]))
    quote_params = _plan_quote(quote, supported, now, notes)
    if notes.errors:
        return PushPlan(lines=(), quote=None, warnings=tuple(notes.warnings), errors=tuple(notes.errors))
    return PushPlan(lines=tuple(planned), quote=quote_params, warnings=tuple(notes.warnings), errors=())


def product_name(line: QuoteSnapshotLine) -> str | None:
    """First available (present and not blank) of custom name, short name, name, spec id."""
    for name in (line.custom_name, line.product_short_name, line.product_name, line.product_spec_id):
        if name is not None and name.strip():
            return name
    return None


def is_one_time(line: QuoteSnapshotLine) -> bool:
    return line.price_model is PriceModel.ONE_TIME_FEE or line.price_frequency is PriceFrequency.ONE_TIME


def _supported(line: QuoteSnapshotLine, notes: _Notes) -> bool:
    if isinstance(line.price_model, Unsupported) or line.price_model in UNSUPPORTED_MODELS:
        notes.warn(NoticeCode.LINE_SKIPPED,
                   f"line {line.position} ({product_name(line) or line.id}) is skipped: {line.price_model.value} "
                   "prices are not pushed to the billing platform", str(line.id))
        return False
    return True


def _plan_line(line: QuoteSnapshotLine, quote: QuoteSnapshot, notes: _Notes) -> PlannedLine:
    line_id = str(line.id)
    one_time = is_one_time(line)
    if one_time == line.recurring:
        notes.error(NoticeCode.LINE_INCONSISTENT,
                    f"line {line.position} is {'recurring' if line.recurring else 'one-time'} but priced as "
                    f"{line.price_model.value} {line.price_frequency.value}", line_id)
    name = product_name(line)
    if name is None:
        notes.error(NoticeCode.PRODUCT_NAME_MISSING, f"line {line.position} has no product name or spec id", line_id)
    else:
        notes.errors.extend(limits.product_name_problems(name, line_id))
    metadata = {
        "service_product_input_id": line_id,
        "service_product_spec_id": line.product_spec_id,
        # the snapshot always carries the frequency; the spec's default (monthly) is for products without one
        "service_quote_price_frequency": line.price_frequency.value,
    }
    notes.errors.extend(limits.metadata_problems("product", metadata, line_id))
    return PlannedLine(
        line_id=line_id,
        product=ProductParams(name=name or "", metadata=metadata),
        price=PriceParams(
            currency=quote.currency.lower(),
            unit_amount=_unit_amount(line, quote.currency, notes),
            recurring=None if one_time else INTERVALS[quote.billing_frequency],
        ),
    )


def _unit_amount(line: QuoteSnapshotLine, currency: str, notes: _Notes) -> int:
    line_id = str(line.id)
    if line.unit_amount < 0:
        notes.error(NoticeCode.NEGATIVE_AMOUNT,
                    f"line {line.position} has a negative unit amount ({line.unit_amount} {currency}); the billing "
                    "platform accepts none", line_id)
        return 0
    minor = to_minor_units(line.unit_amount, currency)
    if not minor.exact:
        sent = from_minor_units(minor.value, currency)
        notes.warn(NoticeCode.AMOUNT_ROUNDED,
                   f"line {line.position}: the unit amount {line.unit_amount} {currency.upper()} does not fit the "
                   f"billing platform's minor units; {sent} {currency.upper()} ({minor.value}) is sent", line_id)
    return minor.value


def _quantity(line: QuoteSnapshotLine, notes: _Notes) -> int:
    whole = max(1, int(line.quantity.quantize(Decimal(1), rounding=ROUND_HALF_UP)))
    if whole != line.quantity:
        notes.warn(NoticeCode.QUANTITY_ROUNDED,
                   f"line {line.position}: the quantity {line.quantity} is sent as {whole} (the billing platform "
                   "takes whole quantities of at least 1)", str(line.id))
    return whole


def _plan_quote(quote: QuoteSnapshot, supported: list[QuoteSnapshotLine], now: datetime,
                notes: _Notes) -> QuoteParams:
    description = quote.name[: limits.MAX_DESCRIPTION_LENGTH]
    if description != quote.name:
        notes.warn(NoticeCode.DESCRIPTION_TRUNCATED,
                   f"the quote name is {len(quote.name)} characters long; its first {limits.MAX_DESCRIPTION_LENGTH} "
                   "are the billing quote's description")
    expires_at, end_date_passed = quote_expiry(quote.end_date, quote.start_date, quote.subscription_term_months, now)
    if end_date_passed:
        notes.warn(NoticeCode.END_DATE_PASSED,
                   f"the quote's end date {quote.end_date} has passed; the billing quote expires at a fallback date")
    term = str(quote.subscription_term_months)
    metadata = {"service_pricing_quote_id": str(quote.id)}
    if quote.opportunity_crm_id:
        metadata["service_opportunity_crm_id"] = quote.opportunity_crm_id
    metadata |= {
        "service_subscription_terms_months": term,
        "service_billing_frequency": quote.billing_frequency.value,
        "service_billing_period_months": str(quote.billing_period_months),
        "service_target_currency": quote.currency.upper(),
    }
    if quote.start_date is not None:
        metadata["service_start_date"] = quote.start_date.isoformat()
    subscription_metadata = {"service_subscription_terms_months": term}
    notes.errors.extend(limits.metadata_problems("quote", metadata))
    notes.errors.extend(limits.metadata_problems("quote subscription_data", subscription_metadata))
    return QuoteParams(
        description=description,
        line_items=tuple(QuoteLineItem(line_id=str(line.id), quantity=_quantity(line, notes)) for line in supported),
        expires_at=expires_at,
        effective_date=effective_date(quote.start_date, now),
        subscription_metadata=subscription_metadata,
        metadata=metadata,
    )
