"""Every route of the api, added in this one place (one module per resource); ``composition.build_http``
calls ``add_routes``."""

from dps_common.http.app import Api

from dps_api.resources import (
    api_keys,
    approval_groups,
    approval_rule_groups,
    approval_rules,
    approvals,
    console_internal,
    deal_groups,
    key_introspection,
    opportunities,
    people,
    pricebooks,
    products,
    quote_lines,
    quote_snapshots,
    quotes,
    whoami,
)
from dps_api.resources.context import AppContext

RESOURCE_MODULES = [
    whoami,
    opportunities,
    deal_groups,
    key_introspection,
    products, pricebooks,
    approval_groups, approval_rules, approval_rule_groups, approvals,
    quotes, quote_lines,
    quote_snapshots,
    api_keys, people, console_internal,
]


def add_routes(api: Api, ctx: AppContext) -> None:
    for module in RESOURCE_MODULES:
        module.register(api, ctx)
