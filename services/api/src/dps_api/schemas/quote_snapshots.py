"""The quote snapshot's JSON as the api writes it for the billing connector
(``GET /internal/v1/.../pricing-quotes/{quoteId}/snapshot``).

The api owns this shape; the connector reads it with its own reader (it never imports this module).
On the wire: money as decimal strings, dates as ISO 8601, enums as their values. The committed example
``tests/contract/fixtures/quote_snapshot.json`` is what this writer renders for a known quote (an api
test checks it), and the connector's tests read that same file.
"""

from __future__ import annotations

from dataclasses import fields
from datetime import date
from decimal import Decimal
from enum import Enum
from typing import Any
from uuid import UUID

from dps_api.domain.quote_snapshot import QuoteSnapshot, QuoteSnapshotLine
from dps_api.domain.quote_views import QuoteView


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(word.capitalize() for word in rest)


def _wire(value: Any) -> Any:
    """A view's value as the snapshot writes it (ids and money as strings, dates ISO, enums by value)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, UUID | Decimal):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    return value


# the view's fields up to its totals, with their names on the wire; the rest is the API's bookkeeping
_VIEW_FIELDS = [f.name for f in fields(QuoteView)]
_HEADER = tuple((name, _camel(name)) for name in _VIEW_FIELDS[: _VIEW_FIELDS.index("totals")])


def render_quote_snapshot(snapshot: QuoteSnapshot) -> dict[str, Any]:
    """The snapshot's JSON: the quote's header fields, the opportunity's CRM id after its id, totals, lines."""
    body: dict[str, Any] = {}
    for name, key in _HEADER:
        body[key] = _wire(getattr(snapshot.quote, name))
        if name == "opportunity_id":
            body["opportunityCrmId"] = snapshot.opportunity_crm_id
    body["totals"] = {
        "recurringPerBillingPeriod": str(snapshot.recurring_per_billing_period),
        "oneTime": str(snapshot.one_time),
        "totalContractValue": str(snapshot.total_contract_value),
    }
    body["lines"] = [_render_line(line) for line in snapshot.lines]
    return body


def _render_line(line: QuoteSnapshotLine) -> dict[str, Any]:
    return {
        "id": str(line.id),
        "position": line.position,
        "productId": str(line.product_id),
        "productSpecId": line.product_spec_id,
        "productVersion": line.product_version,
        "productName": line.product_name,
        "productShortName": line.product_short_name,
        "customName": line.custom_name,
        "priceModel": line.price_model.value,
        "priceFrequency": line.price_frequency.value,
        "quantity": str(line.quantity),
        "unitAmount": str(line.unit_amount),
        "recurring": line.recurring,
        "amount": str(line.amount),
    }
