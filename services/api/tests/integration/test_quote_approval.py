"""The interface the approvals work calls: facts under a row lock, status changes with their event,
and the snapshot, inside the caller's transaction against real PostgreSQL."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from decimal import Decimal

import psycopg
import pytest
from sqlalchemy import delete, text
from sqlalchemy.exc import OperationalError

from dps_common.db import Transactions
from dps_common.errors import NotFound
from dps_common.json import dumps, loads

from dps_api.adapters.outbox import OUTBOX
from dps_api.db.models.identity import Organization, User
from dps_api.db.models.quotes import Quote
from dps_api.db.quotes import find_quote, full_view
from dps_api.domain.approval_rules import QuoteTerms
from dps_api.schemas.quotes import render_quote
from dps_api.services.quote_approval import QuoteFacts, change_quote_status, lock_quote_facts

from quote_helpers import QUOTES, create_quote, events, product, quote_body


def quote_snapshot(session, organization_id: uuid.UUID, quote_id: uuid.UUID) -> dict:
    """The rendered quote with its lines and totals, as GET /pricing-quotes/{id} returns it."""
    return render_quote(full_view(session, find_quote(session, organization_id, quote_id)))


def as_json(snapshot: dict) -> dict:
    """The snapshot as the API and the outbox serialise it (datetimes and dates as ISO strings)."""
    return loads(dumps(snapshot))


@pytest.fixture
def quote(client, org) -> dict:
    locked = product(client, org, locked=True, prices={"USD": "200.00"})
    seats = product(client, org, prices={"USD": "100.00"})
    body = quote_body(
        {"productId": locked["id"], "discountPercent": "7.5"},
        {"productId": seats["id"], "quantity": "3", "netUnitPrice": "80"},
        subscriptionTermMonths=24,
    )
    return create_quote(client, org.admin, {**body, "ownerUserId": str(org.user.user_id)})


def test_facts_are_what_the_rules_evaluate(tx, org, quote):
    with tx() as session:
        facts = lock_quote_facts(session, org.id, uuid.UUID(quote["id"]))
    assert facts == QuoteFacts(
        quote_id=uuid.UUID(quote["id"]),
        owner_user_id=org.user.user_id,
        status="DRAFT",
        line_count=2,
        terms=QuoteTerms(
            currency="USD",
            total_contract_value=Decimal("10200.00"),  # (185 + 240) x 24
            max_discount_percent=Decimal("20.0000"),
            subscription_term_months=24,
            locked_below_list=True,
        ),
    )
    assert quote["totals"]["totalContractValue"] == "10200.00"


def test_unknown_and_other_organizations_quotes_are_not_found(tx, org, other_org, quote):
    quote_id = uuid.UUID(quote["id"])
    for organization_id, target in ((other_org.id, quote_id), (org.id, uuid.uuid4())):
        with tx() as session:
            with pytest.raises(NotFound):
                lock_quote_facts(session, organization_id, target)
            with pytest.raises(NotFound):
                quote_snapshot(session, organization_id, target)
            with pytest.raises(NotFound):
                change_quote_status(OUTBOX, session, organization_id, target, "APPROVED", datetime.now(UTC), "quote.approved")


def test_snapshot_is_the_rendered_quote(client, tx, org, quote):
    with tx() as session:
        snap = as_json(quote_snapshot(session, org.id, uuid.UUID(quote["id"])))
    assert snap == client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.viewer.headers).json == quote


def test_status_changes_write_the_event_given_with_the_snapshot(client, tx, org, quote):
    moment = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    quote_id = uuid.UUID(quote["id"])
    for status, event_type in (("PENDING_APPROVAL", "quote.submitted"), ("DRAFT", "quote.recalled"), ("PENDING_APPROVAL", "quote.submitted"), ("APPROVED", "quote.approved")):
        with tx() as session:
            snap = as_json(change_quote_status(OUTBOX, session, org.id, quote_id, status, moment, event_type).data)
        assert snap["status"] == status and snap["lines"] == quote["lines"]
    served = client.simulate_get(f"{QUOTES}/{quote['id']}", headers=org.viewer.headers).json
    assert served == snap and served["updatedAt"] == "2027-03-01T12:00:00+00:00"
    [approved] = events(tx, org.id, "quote.approved")
    assert approved["data"] == snap and approved["occurredAt"] == "2027-03-01T12:00:00Z"
    assert len(events(tx, org.id, "quote.submitted")) == 2 and len(events(tx, org.id, "quote.recalled")) == 1
    with tx() as session:
        assert lock_quote_facts(session, org.id, quote_id).status == "APPROVED"


def test_an_unknown_status_is_a_programming_error_and_changes_nothing(tx, org, quote):
    with tx() as session:
        with pytest.raises(ValueError):
            change_quote_status(OUTBOX, session, org.id, uuid.UUID(quote["id"]), "CANCELLED", datetime.now(UTC), "quote.cancelled")
    assert events(tx, org.id, "quote.cancelled") == []


def test_facts_hold_a_row_lock_until_the_callers_transaction_ends(engine):
    """Committed rows (a second connection must see them), removed afterwards."""
    tx = Transactions.for_engine(engine)
    now = datetime.now(UTC)
    with tx() as session:
        org = Organization(name="Lock test")
        session.add(org)
        session.flush()
        user = User(organization_id=org.id, email="lock@test.example", name="Lock", role="user")
        session.add(user)
        session.flush()
        row = Quote(
            organization_id=org.id, name="Locked", owner_user_id=user.id, status="DRAFT", currency="USD",
            billing_frequency="MONTHLY", subscription_term_months=12, recurring_per_billing_period=Decimal(0),
            one_time=Decimal(0), total_contract_value=Decimal(0), list_total_contract_value=Decimal(0),
            max_discount_percent=Decimal(0), locked_below_list=False, line_count=0, created_at=now, updated_at=now,
        )
        session.add(row)
        session.flush()
        ids = (org.id, user.id, row.id)
    try:
        with tx() as holder:
            lock_quote_facts(holder, ids[0], ids[2])
            with engine.connect() as other:
                with pytest.raises(OperationalError) as raised:
                    other.execute(text("SELECT id FROM quotes WHERE id = :id FOR UPDATE NOWAIT"), {"id": ids[2]})
                assert isinstance(raised.value.orig, psycopg.errors.LockNotAvailable)
        with engine.connect() as other:  # released at commit
            assert other.execute(text("SELECT id FROM quotes WHERE id = :id FOR UPDATE NOWAIT"), {"id": ids[2]}).scalar() == ids[2]
    finally:
        with tx() as session:
            session.execute(delete(Quote).where(Quote.id == ids[2]))
            session.execute(delete(User).where(User.id == ids[1]))
            session.execute(delete(Organization).where(Organization.id == ids[0]))
