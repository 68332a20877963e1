"""The api's event catalogue: every event type it writes to the outbox, with the schema of its
``data`` (the object as its own GET renders it, after the change). The OpenAPI document's
``webhooks`` section is built from it, and the outbox adapter (``dps_api.adapters.outbox``) refuses
any type not declared here and renders each event's data by its schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from dps_common.events.catalogue import EventCatalogue, EventType

from dps_api.domain.events import Change
from dps_api.schemas.approval_config import ApprovalGroup, ApprovalRule, ApprovalRuleGroup
from dps_api.schemas.approvals import ApprovalRequest
from dps_api.schemas.catalog import Pricebook, Product
from dps_api.schemas.deal_groups import DealGroup
from dps_api.schemas.opportunities import Opportunity
from dps_api.schemas.quotes import PricingQuote

V = TypeVar("V")

EVENTS = EventCatalogue([
    EventType("product.created", "A product was created.", Product),
    EventType("product.updated", "A product changed (a new version when prices or terms changed).", Product),
    EventType("pricebook.created", "A pricebook was created.", Pricebook),
    EventType("pricebook.updated", "A pricebook changed (a new version).", Pricebook),
    EventType("opportunity.created", "An opportunity was created.", Opportunity),
    EventType("opportunity.updated", "An opportunity changed.", Opportunity),
    EventType("opportunity.closed_won", "An opportunity was closed as won.", Opportunity),
    EventType("deal_group.created", "A deal group was created.", DealGroup),
    EventType("deal_group.updated", "A deal group changed.", DealGroup),
    EventType("quote.created", "A pricing quote was created.", PricingQuote),
    EventType("quote.updated", "A quote or its lines changed.", PricingQuote),
    EventType("quote.reopened", "An edit sent an approved or rejected quote back to DRAFT.", PricingQuote),
    EventType("quote.submitted", "A quote was submitted for approval.", PricingQuote),
    EventType("quote.approved", "A quote was approved (at once when no rule fired).", PricingQuote),
    EventType("quote.rejected", "A quote was rejected by an approver.", PricingQuote),
    EventType("quote.recalled", "A quote pending approval was recalled to DRAFT.", PricingQuote),
    EventType("approval.requested", "A quote's approval request was created.", ApprovalRequest),
    EventType("approval.vote_recorded", "An approver voted; the step needs more votes.", ApprovalRequest),
    EventType("approval.step_approved", "A step of the request has all its approvals.", ApprovalRequest),
    EventType("approval.approved", "Every step is approved: the quote is approved.", ApprovalRequest),
    EventType("approval.rejected", "An approver rejected the request.", ApprovalRequest),
    EventType("approval.recalled", "The request was recalled with its quote.", ApprovalRequest),
    EventType("approval_group.created", "An approval group was created.", ApprovalGroup),
    EventType("approval_group.updated", "An approval group changed.", ApprovalGroup),
    EventType("approval_rule.created", "An approval rule was created.", ApprovalRule),
    EventType("approval_rule.updated", "An approval rule changed.", ApprovalRule),
    EventType("approval_rule.deleted", "An approval rule was deleted (data: the rule as it was).", ApprovalRule),
    EventType("approval_rule_group.created", "An approval rule group was created.", ApprovalRuleGroup),
    EventType("approval_rule_group.updated", "An approval rule group changed.", ApprovalRuleGroup),
    EventType("approval_rule_group.deleted", "An approval rule group was deleted (data: as it was).", ApprovalRuleGroup),
])


def render_change(change: Change[V], render: Callable[[V], dict[str, Any]]) -> dict[str, Any]:
    """The answer to a write: the data of the events it recorded (the outbox adapter rendered the view
    for them as its GET renders it, and once is enough: a 500-line quote's rendering is not free),
    else, when nothing was recorded, the view rendered now."""
    return change.events.data if change.events is not None else render(change.view)
