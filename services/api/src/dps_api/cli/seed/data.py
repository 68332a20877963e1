"""What the demo organization holds. Each object's natural key (email, specId, crmId, name) is how
the seed finds it again, so these keys must stay unique and stable.

Bodies are the public API's request bodies (camelCase), typed so the seed reads them safely; the
vocabulary is the API's contract, the words its bodies take (a unit test holds each against the
API's own enums: tests/unit/test_seed_vocabulary.py)."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from dps_common.auth.scopes import Role

# the words of the API's bodies that the demo uses
PriceModel = Literal["FLAT", "PER_UNIT", "TIERED", "ONE_TIME_FEE"]
PriceFrequency = Literal["MONTHLY", "ANNUAL"]
OpportunityStage = Literal["QUALIFICATION", "PROPOSAL", "NEGOTIATION"]
ConditionType = Literal["MAX_DISCOUNT_PERCENT_ABOVE", "TOTAL_CONTRACT_VALUE_ABOVE", "LOCKED_PRICE_BELOW_LIST"]
BillingFrequency = Literal["MONTHLY", "QUARTERLY", "ANNUAL"]


class Tier(TypedDict):
    upTo: str | None
    unitPrice: str


class ProductBody(TypedDict):
    specId: str
    name: str
    priceModel: PriceModel
    listPrices: dict[str, str]
    shortName: NotRequired[str]
    priceFrequency: NotRequired[PriceFrequency]
    tiers: NotRequired[dict[str, list[Tier]]]
    locked: NotRequired[bool]
    active: NotRequired[bool]
    cost: NotRequired[dict[str, str]]


class PricebookBody(TypedDict):
    name: str
    currency: str


class OpportunityBody(TypedDict):
    crmId: str
    name: str
    accountName: str
    stage: OpportunityStage
    amount: str
    currency: str
    closeDate: str


class DealGroupData(TypedDict):
    name: str
    description: str
    crmIds: list[str]  # the members, by crmId


class RuleGroupBody(TypedDict):
    name: str
    position: int


class ConditionBody(TypedDict):
    type: ConditionType
    threshold: NotRequired[str]
    currency: NotRequired[str]


class RuleData(TypedDict):
    name: str
    condition: ConditionBody
    group: str  # the approval group, by name
    ruleGroup: str  # the rule group, by name


class LineData(TypedDict):
    specId: str  # the product, by specId
    quantity: str
    discountPercent: NotRequired[str]
    netUnitPrice: NotRequired[str]
    customName: NotRequired[str]


class QuoteData(TypedDict):
    name: str
    crmId: str  # the opportunity, by crmId
    billingFrequency: BillingFrequency
    subscriptionTermMonths: int
    startDate: str
    endDate: NotRequired[str]
    lines: list[LineData]
    approval: NotRequired[Literal["submit", "approve"]]


ORGANIZATION = "Demo Sales Co"

# label -> (email, name, role in the app)
USERS: dict[str, tuple[str, str, Role]] = {
    "admin": ("ada.admin@demo-sales.example", "Ada Admin", Role.ADMIN),
    "rep": ("sam.seller@demo-sales.example", "Sam Seller", Role.USER),
    "viewer": ("vic.viewer@demo-sales.example", "Vic Viewer", Role.VIEW_ONLY),
    "approver": ("alex.approver@demo-sales.example", "Alex Approver", Role.USER),
}
# granted API-key access when created (the settings console's "user with API-key access": Sam manages
# his own keys there; the admin needs no grant, Vic stays view only without it)
API_KEY_ACCESS: frozenset[str] = frozenset({"rep"})
# the users the seed acts as, each through a short-lived key of the user's own role
ACTORS: dict[str, Role] = {"admin": Role.ADMIN, "rep": Role.USER, "approver": Role.USER}

PRODUCTS: list[ProductBody] = [
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
PRICEBOOK: PricebookBody = {"name": "Standard USD", "currency": "USD"}  # every active product at list; assigned to the rep

OPPORTUNITIES: list[OpportunityBody] = [
    {"crmId": "DEMO-OPP-0001", "name": "Acme expansion 2026", "accountName": "Acme Corp", "stage": "NEGOTIATION",
     "amount": "180000.00", "currency": "USD", "closeDate": "2026-12-15"},
    {"crmId": "DEMO-OPP-0002", "name": "Globex platform rollout", "accountName": "Globex", "stage": "PROPOSAL",
     "amount": "95000.00", "currency": "USD", "closeDate": "2027-01-31"},
    {"crmId": "DEMO-OPP-0003", "name": "Initech renewal", "accountName": "Initech", "stage": "QUALIFICATION",
     "amount": "40000.00", "currency": "USD", "closeDate": "2027-03-31"},
]
DEAL_GROUP: DealGroupData = {"name": "Acme + Globex enterprise bundle", "description": "Priced together for the joint rollout.",
              "crmIds": ["DEMO-OPP-0001", "DEMO-OPP-0002"]}

# approval groups: name -> (member labels, required approvals)
APPROVAL_GROUPS: dict[str, tuple[list[str], int]] = {"Sales Managers": (["approver"], 1), "Finance": (["admin"], 1)}
RULE_GROUPS: list[RuleGroupBody] = [{"name": "Step 1: sales management", "position": 10}, {"name": "Step 2: finance", "position": 20}]
RULES: list[RuleData] = [
    {"name": "Discount above 20%", "condition": {"type": "MAX_DISCOUNT_PERCENT_ABOVE", "threshold": "20"},
     "group": "Sales Managers", "ruleGroup": "Step 1: sales management"},
    {"name": "Deal above USD 250,000",
     "condition": {"type": "TOTAL_CONTRACT_VALUE_ABOVE", "threshold": "250000.00", "currency": "USD"},
     "group": "Finance", "ruleGroup": "Step 2: finance"},
    {"name": "Locked price below list", "condition": {"type": "LOCKED_PRICE_BELOW_LIST"},
     "group": "Finance", "ruleGroup": "Step 2: finance"},
]

# quotes of the rep, priced with the pricebook; lines name products by specId. "approval": the
# quote is submitted by the rep ("submit": it then waits on Sales Managers) and, for "approve",
# approved by the approver. That happens once: only while the quote has no approval request yet.
QUOTES: list[QuoteData] = [
    {"name": "Acme expansion: 2-year platform", "crmId": "DEMO-OPP-0001", "billingFrequency": "MONTHLY",
     "subscriptionTermMonths": 24, "startDate": "2027-01-01", "endDate": "2028-12-31",
     "lines": [{"specId": "PLATFORM-SEAT", "quantity": "150", "discountPercent": "10"},
               {"specId": "PREMIUM-SUPPORT", "quantity": "1"},
               {"specId": "API-CALLS", "quantity": "500"},
               {"specId": "ONBOARDING", "quantity": "1", "customName": "Acme onboarding and data migration"}]},
    {"name": "Globex rollout: launch discount", "crmId": "DEMO-OPP-0002", "billingFrequency": "QUARTERLY",
     "subscriptionTermMonths": 12, "startDate": "2027-02-01",
     "lines": [{"specId": "PLATFORM-SEAT", "quantity": "80", "discountPercent": "25"},
               {"specId": "ANALYTICS-ADDON", "quantity": "2"}],
     "approval": "submit"},
    {"name": "Initech renewal: 1 year", "crmId": "DEMO-OPP-0003", "billingFrequency": "ANNUAL",
     "subscriptionTermMonths": 12, "startDate": "2027-04-01", "endDate": "2028-03-31",
     "lines": [{"specId": "PLATFORM-SEAT", "quantity": "40", "discountPercent": "22"},
               {"specId": "PREMIUM-SUPPORT", "quantity": "1"},
               {"specId": "ONBOARDING", "quantity": "1", "netUnitPrice": "4000.00"}],
     "approval": "approve"},
]
