"""The demo organization for ``make run`` (and the benches), seeded idempotently: a command of the
api's command line, put together by ``dps_api.composition.build_seed``.

Users come from the identity use cases (there is no HTTP API for them); everything else goes
through the public HTTP API, over HTTP to the app served on a loopback port for the run
(``client.serving``), with short-lived keys revoked at the end, so the seed depends only on the
API's contract. Each object is looked up by its natural key first (see
``data``) and created only when missing: seeding again creates nothing, and objects edited in the
demo are left as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from uuid import UUID

import requests

from dps_common.auth.scopes import Role

from dps_api.cli.seed import data
from dps_api.cli.seed.client import DemoApi, Json, SeedError, Tally, serving
from dps_api.composition import Seeding, build_seed
from dps_api.settings import Settings

__all__ = ["DemoSeed", "SeedError", "seed_demo", "seed_and_issue_admin_key"]


@dataclass
class DemoSeed(Tally):
    organization_id: UUID | None = None
    organization_name: str = data.ORGANIZATION
    users: dict[str, UUID] = field(default_factory=dict)  # label -> id
    products: dict[str, str] = field(default_factory=dict)  # specId -> id
    pricebook_id: str | None = None
    opportunities: dict[str, str] = field(default_factory=dict)  # crmId -> id
    deal_group_id: str | None = None
    approval_groups: dict[str, str] = field(default_factory=dict)  # name -> id
    rule_groups: dict[str, str] = field(default_factory=dict)
    rules: dict[str, str] = field(default_factory=dict)
    quotes: dict[str, str] = field(default_factory=dict)
    approvals: dict[str, str] = field(default_factory=dict)  # quote name -> approval request id
    admin_key: str | None = None  # set by ``seed_and_issue_admin_key`` only


def seed_demo(seeding: Seeding) -> DemoSeed:
    """Seed the demo organization into the database behind ``seeding`` (from ``build_seed``)."""
    identity = seeding.identity
    demo = DemoSeed()
    organization_id = _ensure_identity(seeding, demo)
    issued: list[UUID] = []  # the ids of the keys it issued, revoked at the end

    def key_of(label: str) -> Callable[[], str]:
        def issue() -> str:
            user_id, role = demo.users[label], data.ACTORS[label]
            key = identity.issue_key(organization_id, user_id, role, "demo seed (revoked after use)")
            issued.append(key.id)
            return key.secret

        return issue

    with serving(seeding.app) as base_url, requests.Session() as http:
        as_user = {label: DemoApi(http, base_url, key_of(label), demo) for label in data.ACTORS}
        try:
            _seed_all(as_user, demo)
        finally:
            for key_id in issued:
                identity.revoke_key(key_id)
    return demo


def _seed_all(as_user: dict[str, DemoApi], demo: DemoSeed) -> None:
    _seed_catalog(as_user["admin"], demo)
    _seed_opportunities(as_user["admin"], demo)
    _seed_approval_config(as_user["admin"], demo)
    _seed_quotes(as_user["admin"], as_user["rep"], demo)
    _seed_approvals(as_user["admin"], as_user["rep"], as_user["approver"], demo)


def seed_and_issue_admin_key(settings: Settings) -> DemoSeed:
    """``make run``: seed, then issue a fresh admin key for the demo admin (its secret is shown once)."""
    seeding = build_seed(settings)
    try:
        demo = seed_demo(seeding)
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        admin_id = demo.users["admin"]
        organization_id = _seeded(demo.organization_id)
        demo.admin_key = seeding.identity.issue_key(organization_id, admin_id, Role.ADMIN, f"make run {stamp}").secret
        return demo
    finally:
        seeding.close()


def _seeded(organization_id: UUID | None) -> UUID:
    if organization_id is None:
        raise SeedError("the demo organization was not seeded")
    return organization_id


def _field_is(key: str, value: object) -> Callable[[Json], bool]:
    """Matches listed items whose ``key`` holds ``value`` (a natural key)."""
    return lambda item: item[key] == value


def _ensure_identity(seeding: Seeding, demo: DemoSeed) -> UUID:
    """The demo organization's id, with its users (created where missing)."""
    identity = seeding.identity
    org = next((o for o in identity.list_organizations() if o.name == data.ORGANIZATION), None)
    if org is None:
        org = identity.create_organization(data.ORGANIZATION)
        demo.created += 1
    else:
        demo.kept += 1
    demo.organization_id = org.id
    existing = {u.email: u.id for u in identity.list_users(org.id)}
    for label, (email, name, role) in data.USERS.items():
        if email in existing:
            demo.users[label] = existing[email]
            demo.kept += 1
        else:
            demo.users[label] = identity.create_user(org.id, email, name, role).id
            if label in data.API_KEY_ACCESS:  # at creation only: a change made in the console stays
                identity.set_api_key_access(demo.users[label], True)
            demo.created += 1
    return org.id


def _seed_catalog(admin: DemoApi, demo: DemoSeed) -> None:
    for product_body in data.PRODUCTS:
        product = admin.ensure("/products", "products", _field_is("specId", product_body["specId"]), product_body)
        demo.products[product_body["specId"]] = product["id"]
    entries = [
        {"productId": demo.products[p["specId"]], "unitPrice": p["listPrices"][data.PRICEBOOK["currency"]]}
        for p in data.PRODUCTS
        if p.get("active", True) and data.PRICEBOOK["currency"] in p["listPrices"]
    ]
    pricebook = {**data.PRICEBOOK, "assignedUserIds": [str(demo.users["rep"])], "entries": entries}
    demo.pricebook_id = admin.named("/pricebooks", "pricebooks", pricebook)["id"]


def _seed_opportunities(admin: DemoApi, demo: DemoSeed) -> None:
    """Looked up and created by the admin (creating one is the admin's: spec section 5), owned by the rep."""
    for opportunity in data.OPPORTUNITIES:
        found = admin.find("/opportunities", "opportunities", lambda o: True, crmId=opportunity["crmId"])
        if found is None:
            found = admin.call("POST", "/opportunities", {**opportunity, "ownerUserId": str(demo.users["rep"])})
            demo.created += 1
        else:
            demo.kept += 1
        demo.opportunities[opportunity["crmId"]] = found["id"]
    group = data.DEAL_GROUP
    members = [demo.opportunities[crm_id] for crm_id in group["crmIds"]]
    existing = admin.call("GET", "/deal-groups", params={"opportunityId": members[0]})["dealGroups"]
    found = next((g for g in existing if g["name"] == group["name"]), None)
    if found is None:
        deal_group = {"name": group["name"], "description": group["description"], "opportunityIds": members}
        found = admin.call("POST", "/deal-groups", deal_group)
        demo.created += 1
    else:
        demo.kept += 1
    demo.deal_group_id = found["id"]


def _seed_approval_config(admin: DemoApi, demo: DemoSeed) -> None:
    for name, (members, required) in data.APPROVAL_GROUPS.items():
        group = {"name": name, "memberUserIds": [str(demo.users[m]) for m in members], "requiredApprovals": required}
        demo.approval_groups[name] = admin.named("/approval-groups", "approvalGroups", group)["id"]
    for rule_group in data.RULE_GROUPS:
        demo.rule_groups[rule_group["name"]] = admin.named("/approval-rule-groups", "approvalRuleGroups", rule_group)["id"]
    for rule in data.RULES:
        body = {
            "name": rule["name"],
            "condition": rule["condition"],
            "approvalGroupId": demo.approval_groups[rule["group"]],
            "ruleGroupId": demo.rule_groups[rule["ruleGroup"]],
        }
        demo.rules[rule["name"]] = admin.named("/approval-rules", "approvalRules", body)["id"]


def _seed_quotes(admin: DemoApi, rep: DemoApi, demo: DemoSeed) -> None:
    """Looked up as the admin; created by the rep, who thereby owns them."""
    owner = str(demo.users["rep"])
    for quote in data.QUOTES:
        found = admin.find("/pricing-quotes", "pricingQuotes", _field_is("name", quote["name"]), ownerUserId=owner)
        if found is not None:
            demo.kept += 1
            demo.quotes[quote["name"]] = found["id"]
            continue
        body = {k: v for k, v in quote.items() if k not in ("crmId", "lines", "approval")}
        body |= {
            "opportunityId": demo.opportunities[quote["crmId"]],
            "pricebookId": demo.pricebook_id,
            "lines": [
                {"productId": demo.products[line["specId"]], **{k: v for k, v in line.items() if k != "specId"}}
                for line in quote["lines"]
            ],
        }
        created = rep.call("POST", "/pricing-quotes", body)
        demo.created += 1
        demo.quotes[quote["name"]] = created["id"]


def _seed_approvals(admin: DemoApi, rep: DemoApi, approver: DemoApi, demo: DemoSeed) -> None:
    """Submit (and approve) the quotes that say so, unless they already have an approval request."""
    for quote in data.QUOTES:
        if "approval" not in quote:
            continue
        quote_id = demo.quotes[quote["name"]]
        found = admin.find("/approvals", "approvals", lambda a: True, quoteId=quote_id)
        if found is not None:
            demo.kept += 1
            demo.approvals[quote["name"]] = found["id"]
            continue
        request = rep.call("POST", f"/pricing-quotes/{quote_id}/approval")
        demo.created += 1
        if quote["approval"] == "approve" and request["status"] == "PENDING":
            comment = {"comment": "Approved for the demo: renewal discount within policy."}
            request = approver.call("POST", f"/approvals/{request['id']}/approve", comment)
        demo.approvals[quote["name"]] = request["id"]
