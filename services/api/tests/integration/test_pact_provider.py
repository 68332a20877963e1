"""The api verifies what its consumers read from it, as their Pact contracts say (``pacts/`` at the
repository root, written by the consumers' own tests): a real api server on a free port, each provider
state seeded through a state-change endpoint that returns the ids, emails and keys it made (the
verifier puts them in the requests), and the pact core's verifier replaying every interaction against
the server (``dps_testing.pacts``). The dispatcher's message pact is verified with the events the api's
outbox relay would publish after a real approval (the body it claims from the outbox and the
``X-Request-Id`` header it sends with it), one of each event family.

A change of what the api serves that breaks what a consumer reads fails here.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import falcon.testing
import pytest

from dps_testing.pacts import State, outbox_messages, served, state_changes, verify_http, verify_messages

from dps_api.composition import build_http
from dps_api.services.identity import IdentityService

from api_orgs import INTERNAL, Org, make_org
from quote_helpers import API, QUOTES, create_quote, pricebook, product, quote_body

TOKEN = "provider-token-0123456789abcdef0123456789abcdef"  # the api's own, not the one in the pact


class Seeds:
    """The provider states, made through the api itself (its test transaction, rolled back after)."""

    def __init__(self, client: falcon.testing.TestClient, identity: IdentityService):
        self._client = client
        self.identity = identity
        self.orgs: dict[str, Org] = {}

    def org(self) -> Org:
        org = make_org(self.identity, f"Initech {uuid.uuid4().hex[:8]}")
        self.orgs[str(org.id)] = org
        return org

    def approved_quote(self, params: dict[str, Any]) -> dict[str, str]:
        client, org = self._client, self.org()
        resp = client.simulate_post(
            f"{API}/opportunities",
            json={"name": "Renewal", "accountName": "Initech", "crmId": "006-CRM-42"},
            headers=org.admin.headers,
        )
        assert resp.status_code == 201, resp.json
        seats = product(client, org, name="Seats", shortName="Seats", prices={"USD": "100.00"})
        fee = product(client, org, name="Onboarding", priceModel="ONE_TIME_FEE", prices={"USD": "500.00"}, shortName="Onb")
        book = pricebook(client, org, "USD", {seats["id"]: "90.00", fee["id"]: "450.00"}, assigned=(org.user,))
        body = quote_body(
            {"productId": seats["id"], "quantity": "3", "customName": "Seats for Initech"},
            {"productId": fee["id"], "quantity": "2", "customName": "Kick-off"},
            billingFrequency="QUARTERLY",
            opportunityId=resp.json["id"],
            startDate="2027-01-01",
            endDate="2027-12-31",
            pricebookId=book["id"],
        )
        quote = create_quote(client, org.user, body)
        approval = client.simulate_post(f"{QUOTES}/{quote['id']}/approval", headers=org.admin.headers)
        assert approval.status_code == 201, approval.json
        return {"organizationId": str(org.id), "quoteId": quote["id"], "opportunityId": resp.json["id"]}

    def configured(self, org_id: str, opportunity_id: str) -> None:
        """The organization's approval configuration (a group, a rule group, a rule) and a deal group."""
        org = self.orgs[org_id]
        group = self._created("/approval-groups", org, name="Deal desk", memberUserIds=[str(org.admin.user_id)],
                              requiredApprovals=1)
        step = self._created("/approval-rule-groups", org, name="Managers", position=10)
        condition = {"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": "20"}
        self._created("/approval-rules", org, name="Deep discount", condition=condition, approvalGroupId=group["id"],
                      ruleGroupId=step["id"])
        self._created("/deal-groups", org, name="Enterprise bundle", opportunityIds=[opportunity_id])

    def _created(self, path: str, org: Org, **body: Any) -> dict[str, Any]:
        resp = self._client.simulate_post(API + path, json=body, headers=org.admin.headers)
        assert resp.status_code == 201, resp.json
        return dict(resp.json)

    def active_key(self, params: dict[str, Any]) -> dict[str, str]:
        return {"key": self.org().user.key}

    def revoked_key(self, params: dict[str, Any]) -> dict[str, str]:
        org = self.org()
        self.identity.revoke_key(org.viewer.key_row_id)
        return {"key": org.viewer.key}

    def unknown_key(self, params: dict[str, Any]) -> dict[str, str]:
        return {"key": f"dps_{uuid.uuid4().hex[:12]}_{uuid.uuid4().hex}"}  # well formed, never issued

    def active_person(self, params: dict[str, Any]) -> dict[str, str]:
        org = self.org()
        return {"email": f"admin@{org.name.lower().replace(' ', '-')}.example"}  # make_org's emails

    def no_such_person(self, params: dict[str, Any]) -> dict[str, str]:
        return {}

    def console_credential(self, params: dict[str, Any]) -> dict[str, str]:
        email = self.active_person(params)["email"]
        resp = self._client.simulate_post(
            f"{INTERNAL}/credentials", json={"email": email, "sessionId": str(uuid.uuid4())}, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert resp.status_code == 201, resp.json
        return {"keyId": resp.json["keyId"]}

    def organization_without_the_quote(self, params: dict[str, Any]) -> dict[str, str]:
        return {"organizationId": str(self.org().id), "quoteId": params["quoteId"]}


@pytest.fixture
def app(settings, tx, monkeypatch) -> Any:
    monkeypatch.setenv("PACT_DO_NOT_TRACK", "true")  # the pact core's usage report: no call out of the tests
    return build_http(settings.model_copy(update={"internal_api_token": TOKEN, "console_api_token": TOKEN}), tx=tx)


@pytest.fixture
def seeds(app, settings) -> Seeds:
    ctx = app.context
    return Seeds(falcon.testing.TestClient(app), IdentityService(ctx.tx, settings.api_key_pepper, ctx.now, ctx.authenticator.forget))


@pytest.fixture
def provider(app, seeds) -> Iterator[tuple[str, str]]:
    """The api's server and its state-change endpoint."""
    states: dict[str, State] = {
        "an approved quote priced from a pricebook, with an opportunity": seeds.approved_quote,
        "an organization without that quote": seeds.organization_without_the_quote,
        "an active integration key": seeds.active_key,
        "a revoked key": seeds.revoked_key,
        "an unknown key": seeds.unknown_key,
        "an active person": seeds.active_person,
        "no person with that email": seeds.no_such_person,
        "a console credential": seeds.console_credential,
    }
    with served(app) as api, served(state_changes(states)) as state_url:
        yield api, state_url


def verify(consumer: str, provider: tuple[str, str]) -> None:
    api, state_url = provider
    verify_http("api", consumer, api, state_url, {"Authorization": f"Bearer {TOKEN}"})


def test_the_billing_connectors_quote_snapshot(provider):
    verify("billing-connector", provider)


def test_the_key_introspection_clients_answers(provider):
    verify("key-introspection-client", provider)


def test_the_consoles_calls(provider):
    verify("console", provider)


# What one approved quote records, from the opportunity to the approval, then an approval
# configuration and a deal group: an event of each family.
EVENT_TYPES = (
    "opportunity.created", "product.created", "pricebook.created", "quote.created",
    "approval.requested", "approval.approved", "quote.approved",
    "approval_group.created", "approval_rule_group.created", "approval_rule.created", "deal_group.created",
)


def test_the_webhook_dispatchers_events(seeds, tx):
    """One organization's quote approved, its approval configuration and a deal group: their events."""
    made = seeds.approved_quote({})
    seeds.configured(made["organizationId"], made["opportunityId"])
    verify_messages("api", "webhook-dispatcher", outbox_messages(tx, made["organizationId"], EVENT_TYPES))


def test_the_key_event_subscribers_events(seeds, tx):
    """A real rotation and revocation of two keys of one organization: the internal events they record."""
    org = seeds.org()
    seeds.identity.rotate_key(org.user.key_row_id)
    seeds.identity.revoke_key(org.viewer.key_row_id)
    types = ("internal.api_key.revoked", "internal.api_key.rotated")
    verify_messages("api", "key-event-subscriber", outbox_messages(tx, org.id, types))
