"""Every route of the api, added in this one place (one module per resource)."""

from dps_common.http.app import Api

from dps_api.context import AppContext
from dps_api.resources import whoami
from dps_api.resources import deal_groups, opportunities
from dps_api.resources import pricebooks, products

RESOURCE_MODULES = [
    whoami,
    opportunities,
    deal_groups,
    products, pricebooks,
]


def add_routes(api: Api, ctx: AppContext) -> None:
    for module in RESOURCE_MODULES:
        module.register(api, ctx)
