"""What the demo organization holds. Each object's natural key (email, specId, crmId, name) is how
the seed finds it again, so these keys must stay unique and stable."""

ORGANIZATION = "Demo Sales Co"

# label -> (email, name, role in the app)
USERS = {
    "admin": ("ada.admin@demo-sales.example", "Ada Admin", "admin"),
    "rep": ("sam.seller@demo-sales.example", "Sam Seller", "user"),
    "viewer": ("vic.viewer@demo-sales.example", "Vic Viewer", "view only"),
    "approver": ("alex.approver@demo-sales.example", "Alex Approver", "user"),
}
# the users the seed acts as, each through a short-lived key of the user's own role
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
PRICEBOOK = {"name": "Standard USD", "currency": "USD"}  # every active product at list; assigned to the rep

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

# approval groups: name -> (member labels, required approvals)
APPROVAL_GROUPS = {"Sales Managers": (["approver"], 1), "Finance": (["admin"], 1)}
RULE_GROUPS = [{"name": "Step 1: sales management", "position": 10}, {"name": "Step 2: finance", "position": 20}]
RULES = [
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
QUOTES = [
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
