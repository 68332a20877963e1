"""The demo organization for ``make run``, seeded idempotently.

Users come from the identity use cases (there is no HTTP API for them); everything else goes
through the public HTTP API in-process, with short-lived keys revoked at the end, so the seed
depends only on the API's contract. Each object is looked up by a natural key first (a product's
specId, an opportunity's crmId, a name) and created only when missing: seeding twice changes
nothing, and objects edited in the demo are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import falcon
import falcon.testing

from dps_common.db import Transactions, make_engine

from dps_api.app import create_app
from dps_api.services.identity import IdentityService, IssuedKey
from dps_api.settings import Settings

ORGANIZATION = "Demo Sales Co"
PREFIX = "/external/v1"

# label -> (email, name, role in the app)
USERS = {
    "admin": ("ada.admin@demo-sales.example", "Ada Admin", "admin"),
    "rep": ("sam.seller@demo-sales.example", "Sam Seller", "user"),
    "viewer": ("vic.viewer@demo-sales.example", "Vic Viewer", "view only"),
    "approver": ("alex.approver@demo-sales.example", "Alex Approver", "user"),
}
# the users the seed acts as, each with a key of the user's own role
ACTORS = {"admin": "admin", "rep": "user", "approver": "user"}

PRODUCTS = [
    {"specId": "PLATFORM-SEAT", "name": "Platform Seat", "shortName": "Seat", "priceModel": "PER_UNIT",
     "priceFrequency": "MONTHLY", "listPrices": {"USD": "49.00", "EUR": "45.00"}, "cost": {"USD": "9.50"}},
    {"specId": "PREMIUM-SUPPORT", "name": "Premium Support", "priceModel": "FLAT", "priceFrequency": "MONTHLY",
     "listPrices": {"USD": "1500.00", "EUR": "1400.00"}, "locked": True, "cost": {"USD": "600.00"}},
    {"specId": "API-CALLS", "name": "API Calls (per 1,000)", "shortName": "API calls", "priceModel": "TIERED",
     "priceFrequency": "MONTHLY", "listPrices": {"USD": "2.00"},
     "tiers": {"USD": [{"upTo": "100", "unitPrice": "2.00"}, {"upTo": "1000", "unitPrice": "1.50"},
                       {"upTo": None, "unitPrice": "1.00"}]}},
    {"specId": "ONBOARDING", "name": "Onboarding Package", "priceModel": "ONE_TIME_FEE",
     "listPrices": {"USD": "5000.00", "EUR": "4600.00"}, "cost": {"USD": "2000.00"}},
    {"specId": "ANALYTICS-ADDON", "name": "Analytics Add-on", "priceModel": "PER_UNIT", "priceFrequency": "ANNUAL",
     "listPrices": {"USD": "1200.00"}},
    {"specId": "LEGACY-REPORTS", "name": "Legacy Reports (retired)", "priceModel": "FLAT",
     "priceFrequency": "MONTHLY", "listPrices": {"USD": "99.00"}, "active": False},
]
PRICEBOOK = {"name": "Standard USD", "currency": "USD"}
OPPORTUNITIES = [
    {"crmId": "DEMO-OPP-0001", "name": "Acme expansion 2026", "accountName": "Acme Corp", "stage": "NEGOTIATION",
     "amount": "180000.00", "currency": "USD", "closeDate": "2026-12-15"},
    {"crmId": "DEMO-OPP-0002", "name": "Globex platform rollout", "accountName": "Globex", "stage": "PROPOSAL",
     "amount": "95000.00", "currency": "USD", "closeDate": "2027-01-31"},
    {"crmId": "DEMO-OPP-0003", "name": "Initech renewal", "accountName": "Initech", "stage": "QUALIFICATION",
     "amount": "40000.00", "currency": "USD", "closeDate": "2027-03-31"},
]
DEAL_GROUP = {"name": "Acme + Globex enterprise bundle", "description": "Priced together for the joint rollout.",
              "crmIds": ["DEMO-OPP-0001", "DEMO-OPP-0002"]}


class SeedError(RuntimeError):
    """The API refused a demo object: the seed and the API's contract disagree."""


@dataclass
class DemoSeed:
    organization_id: UUID
    organization_name: str
    users: dict[str, UUID]
    products: dict[str, str] = field(default_factory=dict)  # specId -> id
    pricebook_id: str | None = None
    opportunities: dict[str, str] = field(default_factory=dict)  # crmId -> id
    deal_group_id: str | None = None
    created: int = 0
    kept: int = 0
    admin_key: str | None = None  # set by ``seed_and_issue_admin_key`` only


class DemoApi:
    """The public HTTP API in-process, acting as one demo user."""

    def __init__(self, client: falcon.testing.TestClient, key: str, tally: DemoSeed):
        self._client = client
        self._headers = {"x-api-key": key}
        self._tally = tally

    def call(self, method: str, path: str, body: dict | None = None, params: dict | None = None) -> Any:
        resp = self._client.simulate_request(method, PREFIX + path, headers=self._headers, json=body, params=params)
        if resp.status_code not in (200, 201):
            raise SeedError(f"the demo seed failed: {method} {path} answered {resp.status_code}: {resp.text}")
        return resp.json

    def walk(self, path: str, collection: str, **filters: Any) -> Iterator[dict]:
        params: dict[str, Any] = {**filters, "limit": 500}
        while True:
            page = self.call("GET", path, params=params)
            yield from page[collection]
            if page["nextCursor"] is None:
                return
            params["cursor"] = page["nextCursor"]

    def ensure(self, path: str, collection: str, match: Callable[[dict], bool], body: dict, **filters: Any) -> dict:
        """The first listed item ``match`` accepts, else the one created from ``body``."""
        found = next((item for item in self.walk(path, collection, **filters) if match(item)), None)
        if found is not None:
            self._tally.kept += 1
            return found
        self._tally.created += 1
        return self.call("POST", path, body)


def seed_demo(app: falcon.App) -> DemoSeed:
    """Seed the demo organization into the database behind ``app`` (from ``create_app``)."""
    ctx = app.context
    identity = IdentityService(ctx.tx, ctx.settings.api_key_pepper, ctx.now, ctx.authenticator.forget)
    demo = _ensure_identity(identity)
    keys = {label: identity.issue_key(demo.organization_id, demo.users[label], role, "demo seed (revoked after use)")
            for label, role in ACTORS.items()}
    try:
        client = falcon.testing.TestClient(app)
        as_user = {label: DemoApi(client, key.secret, demo) for label, key in keys.items()}
        _seed_catalog(as_user["admin"], demo)
        _seed_opportunities(as_user["rep"], as_user["admin"], demo)
    finally:
        for key in keys.values():
            identity.revoke_key(key.id)
    return demo


def seed_and_issue_admin_key(settings: Settings) -> DemoSeed:
    """``make run``: seed, then issue a fresh admin key for the demo admin (its secret is shown once)."""
    engine = make_engine(settings.database_url, pool_size=2, application_name="dps-seed")
    try:
        app = create_app(settings, tx=Transactions.for_engine(engine))
        demo = seed_demo(app)
        ctx = app.context
        identity = IdentityService(ctx.tx, settings.api_key_pepper, ctx.now, ctx.authenticator.forget)
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        issued: IssuedKey = identity.issue_key(demo.organization_id, demo.users["admin"], "admin", f"make run {stamp}")
        demo.admin_key = issued.secret
        return demo
    finally:
        engine.dispose()


def _ensure_identity(identity: IdentityService) -> DemoSeed:
    orgs = [o for o in identity.list_organizations() if o.name == ORGANIZATION]
    org = orgs[0] if orgs else identity.create_organization(ORGANIZATION)
    existing = {u.email: u.id for u in identity.list_users(org.id)}
    demo = DemoSeed(org.id, org.name, {}, kept=len(orgs))
    demo.created += not orgs
    for label, (email, name, role) in USERS.items():
        if email in existing:
            demo.users[label] = existing[email]
            demo.kept += 1
        else:
            demo.users[label] = identity.create_user(org.id, email, name, role).id
            demo.created += 1
    return demo


def _seed_catalog(admin: DemoApi, demo: DemoSeed) -> None:
    for body in PRODUCTS:
        product = admin.ensure("/products", "products", lambda p, s=body["specId"]: p["specId"] == s, body)
        demo.products[body["specId"]] = product["id"]
    active = [b["specId"] for b in PRODUCTS if b.get("active", True) and "USD" in b["listPrices"]]
    entries = [{"productId": demo.products[s], "unitPrice": _list_price(s, "USD")} for s in active]
    body = {**PRICEBOOK, "assignedUserIds": [str(demo.users["rep"])], "entries": entries}
    pricebook = admin.ensure("/pricebooks", "pricebooks", lambda p: p["name"] == PRICEBOOK["name"], body)
    demo.pricebook_id = pricebook["id"]


def _seed_opportunities(rep: DemoApi, admin: DemoApi, demo: DemoSeed) -> None:
    for body in OPPORTUNITIES:
        found = rep.ensure("/opportunities", "opportunities", lambda o: True, body, crmId=body["crmId"])
        demo.opportunities[body["crmId"]] = found["id"]
    members = [demo.opportunities[c] for c in DEAL_GROUP["crmIds"]]
    groups = admin.call("GET", "/deal-groups", params={"opportunityId": members[0]})["dealGroups"]
    group = next((g for g in groups if g["name"] == DEAL_GROUP["name"]), None)
    if group is None:
        body = {"name": DEAL_GROUP["name"], "description": DEAL_GROUP["description"], "opportunityIds": members}
        group = admin.call("POST", "/deal-groups", body)
        demo.created += 1
    else:
        demo.kept += 1
    demo.deal_group_id = group["id"]


def _list_price(spec_id: str, currency: str) -> str:
    return next(p["listPrices"][currency] for p in PRODUCTS if p["specId"] == spec_id)
