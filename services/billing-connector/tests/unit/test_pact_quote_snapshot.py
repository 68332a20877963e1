"""The quote snapshot as the billing connector reads it, written as a consumer-driven contract (Pact)
for the api: the connector's real ``SnapshotReader`` calls the Pact mock server, and what it reads is
recorded in ``pacts/billing-connector-api.json`` (committed; the api's suite verifies it against a
real api server: services/api/tests/integration/test_pact_provider.py).

The test compares what it records with the committed file, so a change of what the connector reads
fails here until the pact file is rewritten: ``PACT_WRITE=1 pytest <this file>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from pact import Pact, generate, match
from pact.match.matcher import GenericMatcher

from dps_common.errors import NotFound
from dps_testing.pacts import ConsumerContract, decimal_string

from dps_billing.adapters.quote_snapshots import SnapshotReader
from dps_billing.domain.quote_snapshot import BillingFrequency, QuoteStatus

CONTRACT = ConsumerContract("billing-connector")
ORG = "00000000-0000-4000-8000-000000000002"
QUOTE = "00000000-0000-4000-8000-000000000001"
TOKEN = "connector-token-0123456789abcdef"  # the provider verifies with its own token (a custom header)
PATH = "/internal/v1/organizations/{organizationId}/pricing-quotes/{quoteId}/snapshot"
UUID_RE = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


def snapshot_path(organization_id: str, quote_id: str) -> GenericMatcher[str]:
    """The path with the provider's ids: the provider state returns them, the verifier puts them in."""
    example = PATH.format(organizationId=organization_id, quoteId=quote_id)
    pattern = "^" + PATH.format(organizationId=UUID_RE[1:-1], quoteId=UUID_RE[1:-1]) + "$"
    expression = PATH.replace("{organizationId}", "${organizationId}").replace("{quoteId}", "${quoteId}")
    return GenericMatcher("regex", example, regex=pattern, generator=generate.provider_state(expression))


def money(example: str) -> Any:
    """Money and quantities, as the reader parses them: decimal strings (a JSON number fails)."""
    return decimal_string(example)


def line(*, price_model: str, price_frequency: str, recurring: bool) -> dict[str, Any]:
    return {
        "id": match.uuid("00000000-0000-4000-8000-000000000101"),
        "position": match.int(1),
        "productId": match.uuid("00000000-0000-4000-8000-000000000201"),
        "productSpecId": match.str("SPEC-1"),
        "productVersion": match.int(1),
        "productName": match.str("Seats"),
        "productShortName": match.str("Seats"),
        "customName": match.str("Seats for Initech"),
        "priceModel": match.regex(price_model, regex=r"^[A-Z_]+$"),
        "priceFrequency": match.regex(price_frequency, regex=r"^[A-Z_]+$"),
        "quantity": money("3"),
        "unitAmount": money("270.00"),
        "recurring": recurring,
        "amount": money("810.00"),
    }


APPROVED_SNAPSHOT = {
    "id": match.uuid(QUOTE),
    "organizationId": match.uuid(ORG),
    "name": match.str("Initech renewal"),
    "status": "APPROVED",
    "ownerUserId": match.uuid("00000000-0000-4000-8000-000000000004"),
    "opportunityId": match.uuid("00000000-0000-4000-8000-000000000003"),
    "opportunityCrmId": match.str("006-CRM-42"),
    "currency": match.regex("USD", regex=r"^[A-Z]{3}$"),
    "billingFrequency": match.regex("QUARTERLY", regex=r"^(MONTHLY|QUARTERLY|SEMI_ANNUAL|ANNUAL)$"),
    "subscriptionTermMonths": match.int(12),
    "startDate": match.date("2027-01-01"),
    "endDate": match.date("2027-12-31"),
    "pricebookId": match.uuid("00000000-0000-4000-8000-000000000005"),
    "pricebookVersion": match.int(1),
    "totals": {
        "recurringPerBillingPeriod": money("810.00"),
        "oneTime": money("900.00"),
        "totalContractValue": money("4140.00"),
    },
    # one recurring line and one one-time fee, each read the same way
    "lines": [
        line(price_model="PER_UNIT", price_frequency="MONTHLY", recurring=True),
        line(price_model="ONE_TIME_FEE", price_frequency="ONE_TIME", recurring=False),
    ],
}


UNKNOWN_QUOTE = "00000000-0000-4000-8000-0000000000ff"
BEARER = match.regex(f"Bearer {TOKEN}", regex=r"^Bearer \S+$")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from CONTRACT.recorded(tmp_path_factory.mktemp("pacts"))


@pytest.fixture
def pact(recorded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pact]:
    yield from CONTRACT.pact(recorded, monkeypatch)


def test_the_connector_reads_an_approved_quote(pact: Pact):
    (
        pact.upon_receiving("a request for an approved quote's snapshot")
        .given("an approved quote priced from a pricebook, with an opportunity", organizationId=ORG, quoteId=QUOTE)
        .with_request("GET", snapshot_path(ORG, QUOTE))
        .with_header("Authorization", BEARER)
        .will_respond_with(200)
        .with_body(APPROVED_SNAPSHOT, content_type="application/json")
    )
    with pact.serve() as server:
        snapshot = SnapshotReader(str(server.url), TOKEN).read(UUID(ORG), UUID(QUOTE))
    assert snapshot.id == UUID(QUOTE) and snapshot.status is QuoteStatus.APPROVED
    assert snapshot.billing_frequency is BillingFrequency.QUARTERLY
    assert snapshot.total_contract_value == Decimal("4140.00")
    assert [line.recurring for line in snapshot.lines] == [True, False]


def test_an_unknown_quote_is_a_404(pact: Pact):
    (
        pact.upon_receiving("a request for the snapshot of a quote the organization does not have")
        .given("an organization without that quote", organizationId=ORG, quoteId=UNKNOWN_QUOTE)
        .with_request("GET", snapshot_path(ORG, UNKNOWN_QUOTE))
        .with_header("Authorization", BEARER)
        .will_respond_with(404)
    )
    with pact.serve() as server:
        with pytest.raises(NotFound):
            SnapshotReader(str(server.url), TOKEN).read(UUID(ORG), UUID(UNKNOWN_QUOTE))
