"""What the committed snapshot pact (``pacts/billing-connector-api.json``) holds a provider to: the
values' types and formats, not only their names. The pact verifier is run against a tiny provider
that answers the pact's own example with one value changed: a decimal string sent as a JSON number
(``quantity: 3`` instead of ``"3"``, which the connector's reader refuses), an id that is not a UUID,
a date that is not ISO 8601. Each fails verification; the example as it is passes."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from pact import Verifier

from dps_testing.pacts import PACTS, served, state_changes

PACT = PACTS / "billing-connector-api.json"


def _example() -> dict[str, Any]:
    interactions = json.loads(PACT.read_text())["interactions"]
    approved = next(i for i in interactions if i["response"]["status"] == 200)
    return approved["response"]["body"]["content"]


def _provider(snapshot: dict[str, Any]) -> Callable[..., list[bytes]]:
    """Answers every snapshot request with ``snapshot``; the unknown quote of the pact with a 404."""

    def application(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        if environ["PATH_INFO"].endswith("-0000000000ff/snapshot"):
            start_response("404 Not Found", [("Content-Type", "application/problem+json")])
            return [b'{"status": 404}']
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(snapshot).encode()]

    return application


def verification(snapshot: dict[str, Any]) -> str | None:
    """None when the pact verifies against a provider answering ``snapshot``; else the verifier's report."""
    states = {"an approved quote priced from a pricebook, with an opportunity": dict,
              "an organization without that quote": dict}  # the ids the pact names, given back as they are
    with served(_provider(snapshot)) as provider, served(state_changes(states)) as state_url:
        verifier = (
            Verifier("api", host="127.0.0.1")
            .add_transport(url=provider)
            .add_source(PACT)
            .state_handler(state_url, body=True)
            .set_error_on_empty_pact(enabled=True)
        )
        try:
            verifier.verify()
        except RuntimeError:
            return verifier.output(strip_ansi=True)
    return None


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(snapshot: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = snapshot
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value

    return change


@pytest.fixture(autouse=True)
def _no_usage_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PACT_DO_NOT_TRACK", "true")


def test_the_pacts_own_example_verifies():
    assert verification(_example()) is None


@pytest.mark.parametrize(("path", "value", "reported"), [
    ("lines.0.quantity", 3, "$.lines[0].quantity -> Expected 3 (Integer) to be the same type as '3' (String)"),
    ("lines.1.unitAmount", 270.0, "$.lines[1].unitAmount"),
    ("totals.totalContractValue", "4,140.00", "$.totals.totalContractValue"),
    ("id", "quote-1", "$.id"),
    ("startDate", "01/01/2027", "$.startDate"),
    ("subscriptionTermMonths", "12", "$.subscriptionTermMonths"),
])
def test_a_value_of_another_type_or_format_fails_verification(path: str, value: Any, reported: str):
    snapshot = copy.deepcopy(_example())
    _set(path, value)(snapshot)
    report = verification(snapshot)
    assert report is not None and reported in report, report
