"""Roles and the scopes they grant: the role table of spec section 5, in one place for every service."""

from enum import StrEnum


class Role(StrEnum):
    VIEW_ONLY = "view only"
    USER = "user"
    ADMIN = "admin"


class Scope(StrEnum):
    # view only: reads
    OPPORTUNITIES_READ = "opportunities:read"
    QUOTES_READ = "quotes:read"
    PRODUCTS_READ = "products:read"
    PRICEBOOKS_READ = "pricebooks:read"
    APPROVAL_GROUPS_READ = "approval-groups:read"
    DEAL_GROUPS_READ = "deal-groups:read"
    APPROVALS_READ = "approvals:read"
    EVENTS_READ = "events:read"  # the organization's event log (GET /events): what its webhooks were sent
    # user: the key's own quotes and approvals, opportunities
    QUOTES_WRITE = "quotes:write"
    OPPORTUNITIES_WRITE = "opportunities:write"
    APPROVALS_SUBMIT = "approvals:submit"
    APPROVALS_DECIDE = "approvals:decide"
    # admin: everything else
    OPPORTUNITIES_CREATE = "opportunities:create"  # the user role updates opportunities only (spec section 5)
    PRODUCTS_WRITE = "products:write"
    PRODUCTS_COST = "products:cost"
    PRICEBOOKS_WRITE = "pricebooks:write"
    PRICEBOOKS_ANY = "pricebooks:any"
    LOCKED_PRICES_WRITE = "locked-prices:write"
    QUOTES_ANY = "quotes:any"
    DEAL_GROUPS_WRITE = "deal-groups:write"
    APPROVAL_RULES_READ = "approval-rules:read"
    APPROVAL_CONFIG_WRITE = "approval-config:write"
    CRM_PUSH = "crm:push"
    WEBHOOKS_MANAGE = "webhooks:manage"
    BILLING_MANAGE = "billing:manage"
    BILLING_PUSH = "billing:push"
    # no role's: only a console credential of an admin, or of a user granted API-key access
    # (``Principal.has``); an integration key never holds it, whatever its role
    API_KEYS_MANAGE = "api-keys:manage"


_VIEW_ONLY = frozenset(
    {
        Scope.OPPORTUNITIES_READ,
        Scope.QUOTES_READ,
        Scope.PRODUCTS_READ,
        Scope.PRICEBOOKS_READ,
        Scope.APPROVAL_GROUPS_READ,
        Scope.DEAL_GROUPS_READ,
        Scope.APPROVALS_READ,
        Scope.EVENTS_READ,
    }
)
_USER = _VIEW_ONLY | {
    Scope.QUOTES_WRITE,
    Scope.OPPORTUNITIES_WRITE,
    Scope.APPROVALS_SUBMIT,
    Scope.APPROVALS_DECIDE,  # still only for members of the approval group a step waits on (a grant by name)
}

ROLE_SCOPES: dict[Role, frozenset[Scope]] = {
    Role.VIEW_ONLY: _VIEW_ONLY,
    Role.USER: frozenset(_USER),
    Role.ADMIN: frozenset(Scope) - {Scope.API_KEYS_MANAGE},
}
