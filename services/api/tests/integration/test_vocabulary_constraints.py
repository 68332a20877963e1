"""The CHECK constraints the migrations made allow exactly the members of the domain's enums, so
the database and the code cannot drift apart (a new member needs a migration, and this says so)."""

from __future__ import annotations

import re
from enum import StrEnum

import pytest
from sqlalchemy import text

from dps_api.domain.approval_flow import RequestStatus
from dps_api.domain.vocabulary import BillingFrequency, PriceBasis, PriceFrequency, PriceModel, QuoteStatus


def literals(definition: str) -> set[str]:
    """The string literals of a CHECK constraint as PostgreSQL stores it, e.g.
    ``CHECK (((status)::text = ANY ((ARRAY['DRAFT'::character varying, ...])::text[])))``."""
    return set(re.findall(r"'((?:[^']|'')*)'", definition))


def allowed_values(engine, constraint: str) -> set[str]:
    with engine.connect() as connection:
        definition = connection.execute(
            text(
                "SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace "
                "WHERE n.nspname = 'public' AND c.contype = 'c' AND c.conname = :name"
            ),
            {"name": constraint},
        ).scalar_one()
    return literals(definition)


@pytest.mark.parametrize(
    ("constraint", "vocabulary"),
    [
        ("ck_quotes_status", QuoteStatus),
        ("ck_quotes_billing_frequency", BillingFrequency),
        ("ck_quote_lines_price_basis", PriceBasis),
        ("ck_products_price_model", PriceModel),
        ("ck_products_price_frequency", PriceFrequency),
        ("ck_approval_requests_status", RequestStatus),
    ],
)
def test_check_constraint_allows_exactly_the_enum(engine, constraint: str, vocabulary: type[StrEnum]):
    assert allowed_values(engine, constraint) == {member.value for member in vocabulary}


def test_the_reader_sees_a_changed_constraint(engine):
    """The parser is not vacuous: a constraint with one value fewer reads as one value fewer."""
    with engine.begin() as connection:
        connection.execute(text("CREATE TEMPORARY TABLE vocabulary_probe (status varchar(20))"))
        connection.execute(
            text(
                "ALTER TABLE vocabulary_probe ADD CONSTRAINT ck_vocabulary_probe_status "
                "CHECK (status IN ('DRAFT', 'APPROVED'))"
            )
        )
        definition = connection.execute(
            text("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'ck_vocabulary_probe_status'")
        ).scalar_one()
        connection.execute(text("DROP TABLE vocabulary_probe"))
    assert literals(definition) == {"DRAFT", "APPROVED"} != set(QuoteStatus)
